"""Composite policies (`@seq.plan`): a planner per environment, off the per-step path, called
through a real OpenAI-compatible HTTP server; its plans reach `infer` as `instruction` inline,
served and side by side, and each episode's trajectory says which step each plan arrived at."""

from __future__ import annotations

import textwrap
import threading

import numpy as np
import pytest
from conftest import TOY
from fake_chat import FakeChatServer, write_models

import seq
from seq.capture.trajectory import read_trajectory

pytest.importorskip("openai")  # the composite extra

EVERY_S = 0.05
SLOW = 0.03  # a step's move while the plan says "slow…" (a robot acting on its own task moves 0.05 or more)
COMPOSITE = TOY + textwrap.dedent(
    f'''

    @seq.policy(name="line-composite", models=["planner"])
    class LineComposite(seq.Policy):
        """Moves at 0.1 a step toward the goal, at {SLOW} while its plan says "slow…"; with `hold`,
        not at all until a plan has arrived (its episode lasts until one does)."""

        @seq.plan(every_s={EVERY_S})
        def plan(self, obs, *, instruction=None):
            if instruction == "far" and os.environ.get("LINE_PLANNER_RAISES"):
                raise RuntimeError("the planner is broken")
            return self.chat("planner", [{{"role": "user", "content": f"Task: {{instruction}}"}}])

        @seq.infer(batched=True)
        def infer(self, obs, *, seed=None, instruction=None, hold: bool = False):
            time.sleep(0.02)  # a model's latency: the planner gets a few calls per episode
            actions = []
            for o, text in zip(obs, instruction):
                speed = {SLOW} if text.startswith("slow") else 0.0 if hold else 0.1
                actions.append(np.array([np.clip(o[1] - o[0], -speed, speed)]))
            return actions
    '''
)
GOALS = ["slow", "slow-2", "slow-3"]


@pytest.fixture
def composite(tmp_path, seq_home):
    path = tmp_path / "line_composite.py"
    path.write_text(COMPOSITE)
    with FakeChatServer(GOALS) as chat:
        write_models(seq_home, chat.base_url)
        seq.deploy(path)
        yield chat


def _check_plans(episode) -> None:
    """The episode's plans came in order, about every EVERY_S, and infer acted on each from its step."""
    trajectory = read_trajectory(episode.artifacts["trajectory"])
    plans = trajectory.plans
    assert plans, "no plan reached the episode"
    assert episode.metrics["plans"] == len([plan for plan in plans if not plan.get("superseded")])
    texts = [plan["plan"] for plan in plans]
    assert texts == (GOALS + [GOALS[-1]] * len(texts))[: len(texts)]  # this robot's own sequence
    asked = [plan["asked_s"] for plan in plans]
    assert all(later - earlier >= EVERY_S - 1e-3 for earlier, later in zip(asked, asked[1:], strict=False))
    assert all(plan["arrived_s"] >= plan["asked_s"] for plan in plans)
    steps = [plan["t"] for plan in plans]
    assert steps == sorted(steps) and steps[0] >= 1  # the first act has only the robot's own task
    speeds = np.abs(np.array(trajectory.actions)).reshape(-1)
    first = steps[0]
    assert np.all(speeds[:first] == 0.0)  # before the first plan: held, with the robot's own task
    assert np.all(speeds[first:] <= SLOW + 1e-9)  # from the step it arrived: the plan's "slow"


@pytest.mark.parametrize(
    "where",
    [
        {},
        {"serve": True},
        {"envs": 1, "envs_per_worker": 2},
        {"serve": True, "envs": 1, "envs_per_worker": 2},
    ],
    ids=["inline", "served", "envs-per-worker", "served-envs-per-worker"],
)
def test_plans_reach_infer_as_instruction(composite, where):
    """The policy holds still until its first plan arrives, however long a loaded machine takes to
    answer (up to 3,000 steps): no episode can end before a plan reaches it. The planner here
    takes longer than a whole episode that did not wait, as on a machine under load."""
    composite.delay_s = 0.5
    report = seq.eval.run(
        "line-composite", benchmark="line", seeds=[0], trajectories=True, params={"hold": "true"},
        max_steps=3000, **where,
    )  # fmt: skip
    assert report.status == "completed"
    assert [e.status for e in report.episodes] == ["ok", "ok"]
    for episode in report.episodes:
        _check_plans(episode)
    prompts = {r["body"]["messages"][-1]["content"] for r in composite.requests}
    assert prompts == {"Task: near", "Task: far"}  # each environment planned on its own
    assert all(r["body"]["reasoning"] == {"effort": "none"} for r in composite.requests)


def test_a_planner_that_never_answers_never_stalls_a_step(tmp_path, seq_home):
    path = tmp_path / "line_composite.py"
    path.write_text(COMPOSITE)
    release = threading.Event()
    with FakeChatServer(GOALS) as chat:
        chat.answer_gate = release  # every call waits until the eval is over
        write_models(seq_home, chat.base_url)
        seq.deploy(path)
        try:
            report = seq.eval.run(
                "line-composite", benchmark="line", seeds=[0], trajectories=True, serve=True
            )
        finally:
            release.set()
    assert [e.status for e in report.episodes] == ["ok", "ok"]
    for episode in report.episodes:
        trajectory = read_trajectory(episode.artifacts["trajectory"])
        assert trajectory.plans == []  # every step ran while its planner waited
        assert episode.metrics["plans"] == 0.0  # and the report says none arrived
        assert np.all(np.abs(np.array(trajectory.actions)) > SLOW)
    assert chat.requests  # the planner was asked


def test_a_planner_that_raises_fails_its_episode(composite, monkeypatch):
    monkeypatch.setenv("LINE_PLANNER_RAISES", "1")
    report = seq.eval.run("line-composite", benchmark="line", seeds=[0])
    by_task = {e.task: e for e in report.episodes}
    assert by_task["near"].status == "ok"
    failed = by_task["far"]
    assert failed.status == "error" and failed.failure == "policy"
    assert "the planner of line-composite failed" in failed.error
    assert "RuntimeError: the planner is broken" in failed.error
