"""The round trip: a lossless label is a claim the check can refute; honest transforms pass it."""

from __future__ import annotations

import numpy as np
import pytest

import seq
from seq.tf.check import check_chain, difference, round_trip

RNG = np.random.default_rng(0)


def _obs():
    return {
        "image": np.arange(48, dtype=np.uint8).reshape(4, 4, 3),
        "state": np.array([0.1234567, -2.5, 3e-3]),
    }


class Rounds(seq.tf.Transform):
    label = seq.tf.lossless

    def apply(self, x):
        return np.round(x, 2)

    def inverse(self, y):
        return y


class Caches(seq.tf.Transform):
    """Claims lossless by remembering the last input: the second input exposes it."""

    label = seq.tf.lossless

    def apply(self, x):
        self.last = x
        return np.zeros_like(x)

    def inverse(self, y):
        return self.last


class Hides(seq.tf.Transform):
    """Smuggles the input through an attribute of an ndarray subclass: plain copies strip it."""

    label = seq.tf.lossless

    class Tagged(np.ndarray):
        pass

    def apply(self, x):
        y = np.zeros_like(x).view(self.Tagged)
        y.original = x
        return y

    def inverse(self, y):
        return getattr(y, "original", y)


@pytest.mark.parametrize("cheat", [Rounds(), Caches(), Hides()])
def test_a_lossless_claim_that_drops_information_fails(cheat):
    found = round_trip(cheat, [np.array([0.123456, 7.891011])])
    assert found and "does not give x back" in found


def test_a_float64_to_float32_cast_claimed_lossless_fails_but_from_float32_passes():
    honest = seq.tf.cast(None, "float64", source="float32")
    assert not honest.label.lossy and round_trip(honest, [np.float32([0.1, 1e5])]) is None
    claimed = seq.tf.custom(
        lambda x: x.astype(np.float32), lambda y: y.astype(np.float64), label=seq.tf.lossless
    )
    assert "off by" in round_trip(claimed, [np.array([0.1, 1 / 3])])


def test_difference_names_the_key_and_allows_only_rounding():
    x = _obs()
    assert difference(x, {**x, "state": x["state"] * (1 + 1e-15)}) is None
    assert "'state'" in difference(x, {**x, "state": x["state"] + 1e-6})
    assert "key 'state' did not come back" in difference(x, {"image": x["image"]})
    assert "shape" in difference(x, {**x, "image": x["image"][:2]})
    assert "came back different" in difference(x, {**x, "image": x["image"] ^ 1})


def test_no_inverse_or_nothing_to_check_on_is_refused():
    no_inverse = seq.tf.custom(lambda x: x, label=seq.tf.lossless, name="identity")
    assert round_trip(no_inverse, [np.zeros(2)]) == "it has no inverse"
    with_inverse = seq.tf.custom(lambda x: x, lambda y: y, label=seq.tf.lossless)
    assert "nothing to check it on" in round_trip(with_inverse, [])


def test_check_chain_checks_each_lossless_transform_on_what_reaches_it():
    chain = [
        seq.tf.rename("pixels", "image"),
        seq.tf.resize("image", (4, 4), (2, 2)),  # lossy: not checked, but applied
        seq.tf.hwc_to_chw("image"),
        seq.tf.custom(
            lambda x: x, lambda y: {**y, "state": y["state"] * 0}, label=seq.tf.lossless, name="zeroes"
        ),
    ]
    sample = {"pixels": _obs()["image"], "state": _obs()["state"]}
    outputs, failure = check_chain(chain, [sample], RNG)
    assert failure is not None and failure.index == 3 and failure.transform == "zeroes"
    assert "labelled lossless" in failure.reason and "'state'" in failure.reason
    outputs, failure = check_chain(chain[:3], [sample], RNG)
    assert failure is None and outputs[0]["image"].shape == (3, 2, 2)


def test_a_transform_without_a_label_is_refused():
    class Unlabelled(seq.tf.Transform):
        def apply(self, x):
            return x

    _, failure = check_chain([Unlabelled()], [np.zeros(2)], RNG)
    assert failure is not None and "no label" in failure.reason


def test_every_lossless_transform_of_seq_tf_passes_on_its_own_examples():
    transforms = [
        seq.tf.rename({"a": "b"}),
        seq.tf.layout("im", "HWC", "CHW"),
        seq.tf.chw_to_hwc(None),
        seq.tf.flip("im", "HW"),
        seq.tf.normalize("s", mean=[1.0, 2.0], std=[3.0, 0.5]),
        seq.tf.denormalize(low=-2.0, high=3.0),
        seq.tf.cast("x", "float32", source="uint8"),
        seq.tf.concat(["a", "b"], "state", sizes=[3, ()]),
        seq.tf.rotation("q", "quat_wxyz", "quat_xyzw"),
        seq.tf.gripper(),
        seq.tf.scale([1, 2, 3, 4, 5, 6, 7], offset=0.5),
        seq.tf.take([1, 0, 2], size=3),
        seq.tf.resize("im", (4, 4), (8, 12), method="nearest"),
    ]
    for transform in transforms:
        assert not transform.label.lossy, transform
        _, failure = check_chain([transform], [], RNG)
        assert failure is None, (transform, failure)


def test_affine_rounding_is_allowed_at_the_offsets_scale_only_for_seq_tf_own_transforms():
    small = [np.array([1e-3, -2e-3, 5e-4]), np.float32([1e-3, -2e-3, 5e-4])]
    for transform in (
        seq.tf.normalize(mean=1e3, std=1e-3),
        seq.tf.denormalize(mean=1e3, std=1e-3),
        seq.tf.scale(1e-3, offset=1e3),
        seq.tf.gripper(index=0, source=(1e3, 1e3 + 1e-3), target=(-1.0, 1.0)),
    ):
        assert round_trip(transform, small) is None, transform
    same_math = seq.tf.custom(lambda x: x * 1e-3 + 1e3, lambda y: (y - 1e3) / 1e-3, label=seq.tf.lossless)
    assert "off by" in round_trip(same_math, small[:1])

    class Loosened(type(seq.tf.scale(2.0))):
        def rounding_scale(self):
            return 1e12

        def forward(self, value):
            return np.round(super().forward(value), 1)

    assert "off by" in round_trip(Loosened(None, np.array(2.0), np.array(0.0), None), small[:1])
