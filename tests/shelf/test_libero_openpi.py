"""`libero-to-openpi`: deployable as seq's adapters are, what it sends is what openpi's LIBERO
client sends (its resize is Pillow's, bit for bit), and an openpi-protocol server runs `libero`
through it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import numpy as np
from PIL import Image

import seq
import seq.shelf.adapters.libero_openpi as module
from seq.shelf.adapters.libero_openpi import LiberoToOpenPi
from seq.shelf.libero_tasks import SUITES


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


POLICY = '''
import numpy as np
import seq


@seq.policy(name="openpi-like")
class OpenPiLike(seq.Policy):
    """Takes what openpi's LIBERO policies take; answers chunks of 10 still actions."""

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        image, wrist = obs["observation/image"], obs["observation/wrist_image"]
        assert image.shape == wrist.shape == (224, 224, 3) and image.dtype == np.uint8, image.shape
        assert np.shape(obs["observation/state"]) == (8,) and obs["prompt"] == instruction
        return np.tile(np.array([0, 0, 0, 0, 0, 0, -1.0], dtype=np.float32), (10, 1))
'''


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_an_openpi_server_runs_libero_through_it(tmp_path):
    """A policy served in openpi's protocol that takes only openpi's LIBERO request, on `libero`
    (its image) through the adapter: 5 actions of each 10-action chunk, as openpi's client."""
    (tmp_path / "openpi_like.py").write_text(POLICY)
    seq.deploy(tmp_path / "openpi_like.py")
    seq.deploy(module.__file__)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-c", "from seq.cli import main; main()", "policy", "serve", "openpi-like"]
    server = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not _listening(port):
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
            time.sleep(0.3)
        report = seq.eval.run(
            benchmark="libero",
            policy_url=f"ws://127.0.0.1:{port}",
            policy_protocol="openpi",
            adapter="libero-to-openpi",
            tasks=[SUITES["libero_spatial"][2][0]],
            seeds=[0],
            max_steps=10,
            envs=1,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    (episode,) = report.episodes
    assert episode.status == "ok", episode.error
    assert episode.steps == 10 and episode.queries == 2
