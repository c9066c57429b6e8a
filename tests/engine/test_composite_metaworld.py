"""A composite policy over MetaWorld: MetaWorld's scripted expert, led by a planner that a real
OpenAI-compatible HTTP server answers with the next sub-goal. The plans reach `infer` as
`instruction`, about every `every_s` per environment, inline, served and side by side; each
episode's trajectory records them with the step they arrived at."""

from __future__ import annotations

import json
import textwrap

import pytest
from fake_chat import FakeChatServer, write_models

import seq
from seq.capture.trajectory import read_trajectory

pytest.importorskip("metaworld")
pytest.importorskip("openai")  # the composite extra

EVERY_S = 0.05
SUBGOALS = ["move above the target", "lower the gripper", "close on it", "finish"]
COMPOSITE = textwrap.dedent(
    f'''
    """MetaWorld's expert, told its sub-goal by a planner model."""
    import json
    import os
    import time

    import seq
    from seq.shelf.metaworld import MetaWorldExpert


    @seq.policy(name="metaworld-composite", models=["planner"])
    class MetaWorldComposite(seq.Policy):
        @seq.load
        def load(self, weights_dir):
            self.expert = MetaWorldExpert()
            self.expert.load(weights_dir)

        @seq.plan(every_s={EVERY_S})
        def plan(self, obs, *, instruction=None):
            step = self.chat(
                "planner",
                [
                    {{"role": "system", "content": "Reply with the one next step the arm should do now."}},
                    {{"role": "user", "content": f"Task: {{instruction}}"}},
                ],
                max_tokens=16,
                temperature=0,
            )
            return f"{{instruction}}: {{step}}"

        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None):
            time.sleep(0.004)  # a low-level model's latency: a few plans per episode
            with open(os.environ["COMPOSITE_LOG"], "a") as log:
                log.writelines(json.dumps(text) + "\\n" for text in instruction)
            tasks = [text.partition(":")[0] for text in instruction]
            return [self.expert.infer(o, instruction=task) for o, task in zip(obs, tasks)]
    '''
)


@pytest.fixture
def composite(tmp_path, seq_home, monkeypatch):
    path = tmp_path / "metaworld_composite.py"
    path.write_text(COMPOSITE)
    log = tmp_path / "instructions.jsonl"
    monkeypatch.setenv("COMPOSITE_LOG", str(log))
    with FakeChatServer(SUBGOALS) as chat:
        write_models(seq_home, chat.base_url, model="qwen3-8b")
        seq.deploy(path)
        yield chat, log


@pytest.mark.parametrize(
    "where",
    [{}, {"serve": True}, {"envs": 1, "envs_per_worker": 2}],
    ids=["inline", "served", "envs-per-worker"],
)
def test_plans_lead_the_expert(composite, where):
    chat, log = composite
    report = seq.eval.run(
        "metaworld-composite",
        benchmark="metaworld",
        tasks=["reach-v3", "push-v3"],
        seeds=[0],
        max_steps=120,
        trajectories=True,
        **where,
    )
    episodes = {e.task: e for e in report.episodes}
    assert sorted(episodes) == ["push-v3", "reach-v3"]
    assert all(e.status == "ok" for e in episodes.values())
    assert episodes["reach-v3"].metrics["success"] == 1.0  # the expert, led by its plans, still succeeds
    received = [json.loads(line) for line in log.read_text().splitlines()]
    for task, episode in episodes.items():
        plans = read_trajectory(episode.artifacts["trajectory"]).plans
        texts = [plan["plan"] for plan in plans]
        assert len(texts) >= 2, f"{task}: {texts}"
        expected = [f"{task}: {goal}" for goal in SUBGOALS + [SUBGOALS[-1]] * len(texts)]
        assert texts == expected[: len(texts)]  # this environment's own planner, in order
        asked = [plan["asked_s"] for plan in plans]
        gaps = [b - a for a, b in zip(asked, asked[1:], strict=False)]
        assert all(gap >= EVERY_S - 1e-3 for gap in gaps)  # about every every_s, never sooner
        steps = [plan["t"] for plan in plans]
        assert steps == sorted(steps) and 1 <= steps[0] and steps[-1] < episode.steps
        # infer got the robot's own task until the first plan, then each plan as its instruction
        mine = [text for text in received if text.partition(":")[0] == task]
        assert mine[0] == task and mine.count(task) == steps[0]
        used = [plan["plan"] for plan in plans if not plan.get("superseded")]
        assert [text for text in dict.fromkeys(mine) if text != task] == list(dict.fromkeys(used))
    prompts = {r["body"]["messages"][-1]["content"] for r in chat.requests}
    assert prompts == {"Task: reach-v3", "Task: push-v3"}
    assert all(r["body"]["model"] == "qwen3-8b" for r in chat.requests)
