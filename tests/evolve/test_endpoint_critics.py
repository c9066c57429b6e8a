"""The semantic critic and the instruction paraphrase through a local server speaking the real
HTTP protocol of `/v1/chat/completions`, reached by the `openai` client; a slow answer defers.
The critic sends the seed's and the variant's first frames, drawn by the benchmark's renderer, as
image parts; the server decodes them (Pillow) and answers from what it sees."""

from __future__ import annotations

import base64
import io
import json
import time

import numpy as np
import pytest

pytest.importorskip("openai")
uvicorn = pytest.importorskip("uvicorn")
Image = pytest.importorskip("PIL.Image")
from chat_endpoint import chat_endpoint, chat_reply  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402

import seq.evolve  # noqa: E402
from seq.authoring.conditions import Condition  # noqa: E402
from seq.evolve.evals import Settings  # noqa: E402
from seq.evolve.frames import first_frames  # noqa: E402
from seq.evolve.gates import REVIEW, Thresholds, critics, decide, semantic  # noqa: E402
from seq.evolve.operators import InstructionParaphrase  # noqa: E402
from seq.evolve.versions import register  # noqa: E402
from seq.record.store import Store  # noqa: E402
from seq.registry.deploy import resolve  # noqa: E402

ASKED: list[dict] = []
SEEN: list[list[np.ndarray]] = []  # per question, the images the server decoded


def decoded_images(content: object) -> list[np.ndarray]:
    """The image parts of a chat message's content, decoded as a vision model's server would:
    a `data:image/png;base64,` URL, PNG bytes, RGB pixels."""
    if isinstance(content, str):
        return []
    out = []
    for part in content:  # type: ignore[attr-defined]
        if part["type"] == "image_url":
            header, _, data = part["image_url"]["url"].partition(",")
            assert header == "data:image/png;base64", header
            image = Image.open(io.BytesIO(base64.b64decode(data)))
            assert image.format == "PNG"
            out.append(np.asarray(image.convert("RGB")))
    return out


def _changed(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Where two frames differ by more than video compression does (any channel off by > 40)."""
    return np.abs(first.astype(int) - second.astype(int)).max(axis=2) > 40


async def completions(request: Request) -> JSONResponse:
    body = await request.json()
    ASKED.append(body)
    content = body["messages"][-1]["content"]
    question = (
        content if isinstance(content, str) else next(p["text"] for p in content if p["type"] == "text")
    )
    images = decoded_images(content)
    SEEN.append(images)
    if "slow" in body["model"]:
        time.sleep(1.5)
    if "paraphrase" in question:
        content = json.dumps(["Push the puck to the goal.", "Move the puck onto the target."])
    elif "vision" in body["model"]:
        # judges what it sees: two frames of one scene, drawn (not blank), that differ
        scene = len(images) == 2 and all(i.ndim == 3 and i.std() > 10 for i in images)
        changed = scene and float(_changed(*images).mean()) > 0.0005
        verdict = "ok" if scene and changed else "reject"
        sizes = [f"{i.shape[1]}x{i.shape[0]}" for i in images]
        content = json.dumps({"verdict": verdict, "reason": f"saw {len(images)} images {sizes}"})
    else:
        content = json.dumps({"verdict": "ok", "reason": "a moved goal is still the same task"})
    return chat_reply(body["model"], content)


@pytest.fixture(scope="module")
def base_url():
    with chat_endpoint(completions) as url:
        yield url


SEED = Condition("push-v3", 1)
VARIANT = Condition("push-v3", 1, extra={"goal_dx": -0.05, "goal_dy": 0.06})


def test_the_semantic_critic_asks_the_endpoint(base_url):
    verdict = semantic(seq.evolve.Endpoint(base_url, "judge"), "push-v3", VARIANT, SEED)
    assert verdict["verdict"] == "pass" and verdict["judged"] == "description"
    assert "goal_dx" in ASKED[-1]["messages"][-1]["content"]


def test_the_semantic_critic_judges_the_rendered_scene(base_url):
    """MetaWorld's push with a box put in the way: both conditions reset and drawn by the
    benchmark's camera, sent as PNGs; the server decodes two frames of the scene that differ."""
    pytest.importorskip("metaworld")
    store = Store()
    seed = Condition("push-v3", 0, max_steps=150)
    boxed = Condition("push-v3", 0, max_steps=150, extra={"distractor": "box", "distractor_along": 0.5})
    suites = {"candidates": [boxed], "seeds": [seed]}
    staged = register(
        "metaworld-frames", resolve("benchmark", "metaworld", store), suites, {}, store, internal=True
    )
    frames = first_frames("metaworld-expert", staged, ["candidates", "seeds"], Settings(envs=1), {}, store)
    assert not frames.missing and set(frames.images) == {seed.key, boxed.key}
    images = {"seed": frames.images[seed.key], "variant": frames.images[boxed.key]}
    verdict = semantic(seq.evolve.Endpoint(base_url, "vision-judge"), "push-v3", boxed, seed, images)
    assert verdict["verdict"] == "pass", verdict
    assert verdict["judged"] == "images" and verdict["images"] == ["seed", "variant"]
    first, second = SEEN[-1]
    assert first.shape == second.shape == (224, 224, 3)  # the benchmark's camera, as recorded
    assert "first frame of the seed condition" in ASKED[-1]["messages"][-1]["content"][0]["text"]
    # the same scene but the box: most pixels alike, some changed
    assert 0.0005 < _changed(first, second).mean() < 0.05
    same = semantic(seq.evolve.Endpoint(base_url, "vision-judge"), "push-v3", boxed, seed,
                    {"seed": images["seed"], "variant": images["seed"]})  # fmt: skip
    assert same["verdict"] == "fail"  # the server looked: two identical frames show no variant


def test_a_slow_endpoint_defers_the_candidate(base_url):
    verdict = semantic(seq.evolve.Endpoint(base_url, "slow-judge", timeout_s=0.3), "push-v3", VARIANT, SEED)
    assert verdict["verdict"] == "deferred"
    hard = {"drop": 0.5, "pairs": 10, "p_value": 0.001}  # the fresh trials' exact test passed
    reference = {"success": 1.0, "episodes": 2, "distinct": 2, "limit": 100, "steps": 50, "spare": 50}
    verdicts = critics(0.2, [1.0, 1.0], reference, 100.0, 100.0, Thresholds(), verdict)
    decision, reasons = decide(hard, verdicts, 1.0, Thresholds())
    assert decision == REVIEW and any("semantic critic: deferred" in r for r in reasons)


def test_paraphrases_come_from_the_endpoint_or_from_templates(base_url):
    quick = InstructionParaphrase(seq.evolve.Endpoint(base_url, "writer"))
    assert quick.paraphrases("Push the puck to the goal") == [
        "Push the puck to the goal.",
        "Move the puck onto the target.",
    ]
    slow = InstructionParaphrase(seq.evolve.Endpoint(base_url, "slow-writer", timeout_s=0.3))
    assert slow.paraphrases("Push the puck to the goal") == [
        "Please push the puck to the goal.",
        "Could you push the puck to the goal?",
    ]
    condition = Condition("push-v3", 0, extra={"instruction": "Push the puck to the goal"})
    mutated = quick.mutate(condition, None, {})  # type: ignore[arg-type]
    assert [c.extra["instruction"] for c in mutated][0] == "Push the puck to the goal."
