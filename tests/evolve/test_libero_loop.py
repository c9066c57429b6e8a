"""`seq evolve run` on LIBERO end to end, from the command line: the noisy scripted policy
(`libero_noisy_policy.py`, deployed as a user would) as the target, `libero-scripted` as the
reference, one cycle on one libero_object task and init state in LIBERO's own image (noise 0.2:
about half its episodes fail). The failed episodes are
judged from LIBERO's traces (contacts, instruction, the goal's progress), every operator LIBERO
declares proposes candidates (a distractor among them), the gate judges them on fresh trials,
and the semantic critic judges each candidate's first frame, drawn by LIBERO's renderer, through
a fake vision endpoint that speaks the chat protocol over a real socket and decodes the PNGs.
A few minutes on two cores."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

uvicorn = pytest.importorskip("uvicorn")
Image = pytest.importorskip("PIL.Image")
from chat_endpoint import chat_endpoint, chat_reply  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402

from seq.shelf.libero_tasks import SUITES  # noqa: E402

POLICY = Path(__file__).with_name("libero_noisy_policy.py")
TASK = SUITES["libero_object"][0][0]  # the alphabet soup into the basket
TRIALS = 6
SEEN: list[list[np.ndarray]] = []  # the images of each question the endpoint was asked


async def completions(request: Request) -> JSONResponse:
    """A judge that looks: it decodes every image part (base64 PNG) and passes a variant only
    when it was shown two drawn frames (the seed's and the variant's) of one size."""
    body = await request.json()
    content = body["messages"][-1]["content"]
    images = []
    for part in [] if isinstance(content, str) else content:
        if part["type"] == "image_url":
            header, _, data = part["image_url"]["url"].partition(",")
            assert header == "data:image/png;base64", header
            images.append(np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")))
    SEEN.append(images)
    drawn = len(images) == 2 and images[0].shape == images[1].shape and all(i.std() > 10 for i in images)
    reason = f"saw {len(images)} frames {[i.shape for i in images]}"
    reply = json.dumps({"verdict": "ok" if drawn else "reject", "reason": reason})
    return chat_reply(body["model"], reply)


@pytest.fixture(scope="module")
def endpoint():
    with chat_endpoint(completions) as url:
        yield url


def test_one_cycle_on_libero_from_the_command_line(tmp_path, endpoint):
    env = {"SEQ_HOME": str(tmp_path / "home"), "MUJOCO_GL": "egl"}
    deployed = run_cli("deploy", str(POLICY), env=env)
    assert deployed.returncode == 0, deployed.stderr[-2000:]
    done = run_cli(
        "evolve", "run", "libero", "--suite", "libero_object", "--policy", "libero-noisy-scripted",
        "--param", "noise=0.2", "--reference", "libero-scripted", "--tasks", TASK, "--seeds", "0",
        "--trials", str(TRIALS), "--reference-trials", "1", "--max-candidates", "3", "--envs", "2",
        "--endpoint", endpoint, "--model", "vision-judge", "--timeout-s", "60",
        env=env, timeout=1500,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-2000:]
    log = json.loads((tmp_path / "home" / "evolve" / "libero.json").read_text())
    (cycle,) = log["cycles"]
    assert f"of {TRIALS} episodes failed" in done.stdout
    assert cycle["clusters"] and cycle["candidates"]
    candidates = cycle["candidates"]
    assert {c["operator"] for c in candidates} == {"pose", "horizon", "distractor"}
    assert all(c["difficulty"]["trials"] == [TRIALS, 2 * TRIALS] for c in candidates)
    # every candidate judged from the frames LIBERO drew of it and of its seed
    assert {c["critics"]["semantic"]["judged"] for c in candidates} == {"images"}
    assert {c["critics"]["semantic"]["verdict"] for c in candidates} == {"pass"}
    shown = [images for images in SEEN if images]  # the cluster's summary is asked in words
    assert len(shown) == len(candidates) and all(len(images) == 2 for images in shown)
    assert all(image.shape == (224, 224, 3) for images in shown for image in images)
    distractor = next(c for c in candidates if c["operator"] == "distractor")
    assert distractor["condition"]["extra"]["distractor"] in ("libero_mug_yellow", "milk")
    # the report gives every candidate's drop on the fresh trials, and the re-estimate where made
    report = run_cli("evolve", "report", env=env)
    assert report.returncode == 0, report.stderr
    assert f"fresh trials (trials {TRIALS}–{2 * TRIALS - 1})" in report.stdout
    for c in candidates:
        hard = c["difficulty"]
        row = next(line for line in report.stdout.splitlines() if line.startswith(f"| {c['id']} |"))
        assert f"{hard['drop']:+.2f} (" in row and f"n {hard['pairs']}:" in row and c["decision"] in row
        if c["decision"] in ("promote", "review"):
            again = c["estimate"]
            assert again["trials"] == [2 * TRIALS, 3 * TRIALS]
            assert f"{again['drop']:+.2f} [" in row and f"(n {again['pairs']})" in row
