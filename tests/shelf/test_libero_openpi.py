"""`libero-to-openpi`: deployable as seq's adapters are, and what it sends is what openpi's LIBERO
client sends (its resize is Pillow's, bit for bit)."""

from __future__ import annotations

import numpy as np
from PIL import Image

import seq
import seq.shelf.libero_openpi as module
from seq.shelf.libero_openpi import LiberoToOpenPi


def _scene(rng: np.random.Generator) -> np.ndarray:
    """A 256² picture with smooth parts, edges and noise."""
    y, x = np.mgrid[0:256, 0:256]
    smooth = np.stack([x, y, (x * y) % 256], axis=-1)
    edges = np.where((x // 32 + y // 32) % 2 == 0, 200, 30)[..., None]
    noise = rng.integers(0, 40, (256, 256, 3))
    return np.clip(smooth * 0.5 + edges * 0.4 + noise, 0, 255).astype(np.uint8)


def test_it_deploys_and_sends_openpi_s_request():
    (deployed,) = seq.deploy(module.__file__)
    assert deployed.kind == "adapter" and str(deployed) == "libero-to-openpi@v1"
    rng = np.random.default_rng(0)
    obs = {"agentview_image": _scene(rng), "wrist_image": _scene(rng), "state": rng.normal(size=8)}
    for size in (224, 160):
        sent = LiberoToOpenPi(image_size=size).transform_obs(obs)
        assert sorted(sent) == ["observation/image", "observation/state", "observation/wrist_image"]
        pairs = (("observation/image", "agentview_image"), ("observation/wrist_image", "wrist_image"))
        for ours, theirs in pairs:
            expected = np.array(Image.fromarray(obs[theirs]).resize((size, size), resample=Image.BILINEAR))
            assert sent[ours].dtype == np.uint8 and np.array_equal(sent[ours], expected)
        assert np.array_equal(sent["observation/state"], obs["state"])
