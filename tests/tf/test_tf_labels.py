"""Labels are truthful: seq.tf's own transforms say lossy where they lose, with a reason."""

from __future__ import annotations

import pytest

import seq


def test_lossy_needs_a_reason_and_lossless_is_a_constant():
    assert str(seq.tf.lossless) == "lossless" and not seq.tf.lossless.lossy
    assert seq.tf.lossy("drops depth").reason == "drops depth"
    with pytest.raises(seq.SeqInputError, match="reason"):
        seq.tf.lossy("  ")


@pytest.mark.parametrize(
    ("transform", "fragment"),
    [
        (seq.tf.resize("image", (256, 256), (224, 224)), "drops pixels"),
        (seq.tf.resize("image", (64, 64), (128, 128)), "does not keep every pixel"),
        (seq.tf.resize("image", None, (224, 224), method="nearest"), "whatever size"),
        (seq.tf.crop("image", (200, 200)), "outside it are dropped"),
        (seq.tf.select("image", "state"), "every other key is dropped"),
        (seq.tf.drop("depth"), "drops 'depth'"),
        (seq.tf.concat(["a", "b"], "state"), "cannot be split back"),
        (seq.tf.cast("state", "float32"), "may round"),
        (seq.tf.cast("state", "float32", source="float64"), "rounds or overflows"),
        (seq.tf.normalize("s", mean=0.0, std=2.0, clip=True), "clipped"),
        (seq.tf.normalize("s", mean=0.0, std=2.0, dtype="float32"), "rounded to float32"),
        (seq.tf.rotation("q", "quat_wxyz", "axis_angle"), "sign"),
        (seq.tf.rotation("r", "axis_angle", "quat_wxyz"), "longer than π"),
        (seq.tf.rotation("e", "euler_xyz", "matrix"), "gimbal lock"),
        (seq.tf.gripper(threshold=0.0), "binarised"),
        (seq.tf.clip(-1, 1), "clipped"),
        (seq.tf.take(range(7)), "keeps only entries"),
    ],
)
def test_seq_tf_labels_a_loss_as_lossy_with_its_reason(transform, fragment):
    assert transform.label.lossy and fragment in transform.label.reason


def test_an_author_may_claim_a_loss_but_not_the_absence_of_one():
    assert seq.tf.resize("image", (256, 256), (224, 224), lossy="the policy takes 224x224").label.reason == (
        "the policy takes 224x224"
    )
    assert seq.tf.rename("a", "b").label is seq.tf.lossless
    assert seq.tf.scale(2.0, lossy="a deliberate claim").label.lossy
    with pytest.raises(TypeError):
        seq.tf.resize("image", (256, 256), (224, 224), lossless=True)  # no way to claim it


def test_bad_arguments_are_refused_with_the_transform_named():
    for make, fragment in [
        (lambda: seq.tf.resize("image", (0, 4), (2, 2)), "seq.tf.resize"),
        (lambda: seq.tf.normalize("s", mean=1.0, std=0.0), "seq.tf.normalize"),
        (lambda: seq.tf.rotation("q", "quat", "axis_angle"), "seq.tf.rotation"),
        (lambda: seq.tf.rotation("q", "euler_xyz", "euler_xyz"), "nothing to convert"),
        (lambda: seq.tf.scale(0.0), "seq.tf.scale"),
        (lambda: seq.tf.layout("im", "HWC", "CHX"), "seq.tf.layout"),
        (lambda: seq.tf.rename({"a": "c", "b": "c"}), "seq.tf.rename"),
        (lambda: seq.tf.custom(lambda x: x, label="lossless"), "seq.tf.custom"),
    ]:
        with pytest.raises(seq.SeqInputError, match=fragment):
            make()
