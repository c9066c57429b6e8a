"""The semantic critic and the instruction paraphrase through a local server speaking the real
HTTP protocol of `/v1/chat/completions`, reached by the `openai` client; a slow answer defers."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

pytest.importorskip("openai")
uvicorn = pytest.importorskip("uvicorn")
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

import seq.evolve  # noqa: E402
from seq.authoring.conditions import Condition  # noqa: E402
from seq.evolve.gates import REVIEW, Thresholds, critics, decide, semantic  # noqa: E402
from seq.evolve.operators import InstructionParaphrase  # noqa: E402

ASKED: list[dict] = []


async def completions(request: Request) -> JSONResponse:
    body = await request.json()
    ASKED.append(body)
    question = body["messages"][-1]["content"]
    if "slow" in body["model"]:
        time.sleep(1.5)
    if "paraphrase" in question:
        content = json.dumps(["Push the puck to the goal.", "Move the puck onto the target."])
    else:
        content = json.dumps({"verdict": "ok", "reason": "a moved goal is still the same task"})
    return JSONResponse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


@pytest.fixture(scope="module")
def base_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(5)


SEED = Condition("push-v3", 1)
VARIANT = Condition("push-v3", 1, extra={"goal_dx": -0.05, "goal_dy": 0.06})


def test_the_semantic_critic_asks_the_endpoint(base_url):
    verdict = semantic(seq.evolve.Endpoint(base_url, "judge"), "push-v3", VARIANT, SEED)
    assert verdict["verdict"] == "pass"
    assert "goal_dx" in ASKED[-1]["messages"][-1]["content"]


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
