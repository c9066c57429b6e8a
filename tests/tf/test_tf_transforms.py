"""What each transform computes: keys, images, numbers, gripper and actions."""

from __future__ import annotations

import numpy as np
import pytest

import seq


def test_rename_select_drop_and_concat():
    obs = {"pixels": np.zeros((2, 2)), "pos": np.arange(3.0), "grip": np.float64(0.5), "depth": np.ones(1)}
    renamed = seq.tf.rename({"pixels": "image"}).apply(obs)
    assert list(renamed) == ["image", "pos", "grip", "depth"] and renamed["image"] is obs["pixels"]
    assert list(seq.tf.select("pos", "image").apply(renamed)) == ["pos", "image"]
    assert "depth" not in seq.tf.drop("depth").apply(obs)
    concat = seq.tf.concat(["pos", "grip"], "state", sizes=[3, ()])
    out = concat.apply(obs)
    assert np.array_equal(out["state"], [0.0, 1.0, 2.0, 0.5]) and "pos" not in out
    back = concat.inverse(out)
    assert back["grip"].shape == () and np.array_equal(back["pos"], obs["pos"])
    with pytest.raises(KeyError, match="needs key 'camera'; the value has 'pixels'"):
        seq.tf.rename("camera", "image").apply(obs)
    with pytest.raises(KeyError, match="overwrite key 'pos'"):
        seq.tf.rename("pixels", "pos").apply(obs)


def test_resize_bilinear_and_nearest():
    image = np.full((8, 6, 3), 200, dtype=np.uint8)
    out = seq.tf.resize("image", (8, 6), (4, 3)).apply({"image": image})["image"]
    assert out.shape == (4, 3, 3) and out.dtype == np.uint8 and np.all(out == 200)
    ramp = np.tile(np.arange(4.0), (2, 1))  # HW, 2x4: a ramp along the width
    up = seq.tf.resize(None, (2, 4), (2, 8)).apply(ramp)
    assert np.allclose(up[0, 1:7], (np.arange(1, 7) + 0.5) / 2 - 0.5)  # half-pixel centres
    nearest = seq.tf.resize(None, (2, 4), (4, 8), method="nearest")
    assert np.array_equal(nearest.apply(ramp), ramp.repeat(2, 0).repeat(2, 1))
    assert np.array_equal(nearest.inverse(nearest.apply(ramp)), ramp)
    with pytest.raises(ValueError, match="declared 2x4"):
        nearest.apply(np.zeros((3, 4)))


def test_crop_layout_and_flip():
    image = np.arange(5 * 7 * 3).reshape(5, 7, 3)
    assert np.array_equal(seq.tf.crop(None, (3, 3)).apply(image), image[1:4, 2:5])
    assert np.array_equal(seq.tf.crop(None, (2, 2), offset=(0, 5)).apply(image), image[0:2, 5:7])
    chw = seq.tf.hwc_to_chw(None).apply(image)
    assert chw.shape == (3, 5, 7) and np.array_equal(seq.tf.chw_to_hwc(None).apply(chw), image)
    stacked = np.stack([image, image])  # leading (time) axes are kept
    assert seq.tf.hwc_to_chw(None).apply(stacked).shape == (2, 3, 5, 7)
    assert np.array_equal(seq.tf.flip(None, "HW").apply(image), image[::-1, ::-1])


def test_normalize_denormalize_and_cast():
    x = np.array([1.0, 5.0, 9.0], dtype=np.float32)
    normalized = seq.tf.normalize(mean=5.0, std=4.0).apply(x)
    assert normalized.dtype == np.float32 and np.allclose(normalized, [-1.0, 0.0, 1.0])
    ranged = seq.tf.normalize(low=1.0, high=9.0).apply(x)
    assert np.allclose(ranged, [-1.0, 0.0, 1.0])
    assert np.allclose(seq.tf.denormalize(low=1.0, high=9.0).apply(ranged), x)
    assert np.allclose(seq.tf.denormalize(low=0.0, high=1.0, clip=True).apply(np.array([2.0])), [1.0])
    assert seq.tf.normalize(mean=0.0, std=1.0).apply(np.arange(3, dtype=np.uint8)).dtype == np.float32
    image = np.array([[0, 128, 255]], dtype=np.uint8)
    assert seq.tf.cast(None, "float32", source="uint8").apply(image).dtype == np.float32
    assert np.array_equal(seq.tf.cast(None, "uint8").apply(np.array([-3.0, 1.6, 300.0])), [0, 2, 255])
    with pytest.raises(ValueError, match="declared uint8"):
        seq.tf.cast(None, "float32", source="uint8").apply(image.astype(np.int16))


def test_gripper_scale_clip_take():
    action = np.array([0.1, 0.2, -1.0])
    assert np.array_equal(seq.tf.gripper().apply(action), [0.1, 0.2, 1.0])
    to_unit = seq.tf.gripper(source=(-1, 1), target=(0, 1))
    assert to_unit.apply(action)[-1] == 0.0 and np.allclose(to_unit.inverse(to_unit.apply(action)), action)
    assert seq.tf.gripper(index=0, threshold=0.05, target=(-1, 1)).apply(action)[0] == 1.0
    assert np.allclose(seq.tf.scale([2, 2, 1], offset=[0, 1, 0]).apply(action), [0.2, 1.4, -1.0])
    assert np.array_equal(seq.tf.clip(-0.15, 0.15).apply(action), [0.1, 0.15, -0.15])
    assert np.array_equal(seq.tf.take([0, 2]).apply(action), [0.1, -1.0])
    reorder = seq.tf.take([2, 0, 1], size=3)
    assert np.array_equal(reorder.inverse(reorder.apply(action)), action)
    with pytest.raises(ValueError, match="no entry 5"):
        seq.tf.gripper(index=5).apply(action)
