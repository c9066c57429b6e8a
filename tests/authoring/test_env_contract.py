"""The env contract (`seq.authoring.env_contract`): a benchmark's env is reset and stepped the same
way whether it speaks gymnasium's API or old gym's, and a step that speaks neither is refused."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import seq
from seq.authoring.benchmark import spec_of
from seq.authoring.env_contract import (
    ContractError,
    check_metrics,
    close_env,
    reset_env,
    step_env,
    step_outcome,
)


class Line:
    """A point walking right from its seed; the episode ends at 3, or at the time limit of 2 steps."""

    action_space = None

    def __init__(self) -> None:
        self.position = self.steps = 0
        self.closed = False

    def start(self, seed: int | None) -> np.ndarray:
        self.position, self.steps = seed or 0, 0
        return np.array([float(self.position)])

    def move(self, action: float) -> tuple[np.ndarray, float, bool, bool]:
        self.position += int(action)
        self.steps += 1
        return np.array([float(self.position)]), 1.0, self.position >= 3, self.steps >= 2

    def close(self) -> None:
        self.closed = True


class GymnasiumLine(Line):
    def reset(self, *, seed: int | None = None) -> tuple[np.ndarray, dict]:
        return self.start(seed), {"seed": seed}

    def step(self, action: float) -> tuple[np.ndarray, float, bool, bool, dict]:
        obs, reward, terminated, truncated = self.move(action)
        return obs, reward, terminated, truncated, {}


class OldGymLine(Line):
    def reset(self, seed: int | None = None) -> np.ndarray:
        return self.start(seed)

    def step(self, action: float) -> tuple[np.ndarray, np.float32, bool, dict]:
        obs, reward, terminated, truncated = self.move(action)
        info = {"TimeLimit.truncated": True} if truncated and not terminated else {}
        return obs, np.float32(reward), terminated or truncated, info


def _benchmark(env_type: type[Line]) -> tuple[seq.Benchmark, object]:
    @seq.benchmark(name=f"line-{env_type.__name__}", conditions=seq.conditions(tasks=["walk"], seeds=[1]))
    class Walk(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return env_type()

        @seq.check
        def check(self, env):
            return seq.Step(metrics={"position": env.position})

    return Walk(), spec_of(Walk)


@pytest.mark.parametrize("env_type", [GymnasiumLine, OldGymLine])
def test_either_api_resets_to_the_seeded_observation_and_steps_to_the_same_outcomes(env_type):
    benchmark, spec = _benchmark(env_type)
    condition = spec.suites[spec.default_suite][0]
    built = []
    env, observation, info = reset_env(benchmark, spec, condition, built.append)
    assert built == [env] and isinstance(env, env_type)
    assert observation.tolist() == [1.0]
    assert info == ({"seed": 1} if env_type is GymnasiumLine else {})

    first = step_env(env, 1, spec.name)  # to 2: neither ended nor out of time
    assert first.observation.tolist() == [2.0] and first.reward == 1.0 and type(first.reward) is float
    assert (first.terminated, first.truncated, first.done) == (False, False, False)
    second = step_env(env, 0, spec.name)  # still at 2 after two steps: the time limit
    assert (second.terminated, second.truncated, second.done) == (False, True, True)

    env, _, _ = reset_env(benchmark, spec, condition)
    reached = step_env(env, 2, spec.name)  # at 3: the task ended it
    assert (reached.terminated, reached.truncated, reached.done) == (True, False, True)
    assert check_metrics(benchmark.check(env)) == {"position": 3.0}
    close_env(env)
    assert env.closed


def test_an_env_reset_that_raises_is_still_handed_over_to_be_closed():
    class Broken(GymnasiumLine):
        def reset(self, *, seed=None):
            raise RuntimeError("no scene")

    benchmark, spec = _benchmark(Broken)
    built = []
    with pytest.raises(RuntimeError, match="no scene"):
        reset_env(benchmark, spec, spec.suites[spec.default_suite][0], built.append)
    assert len(built) == 1 and isinstance(built[0], Broken)


def test_a_step_of_neither_api_or_with_a_reward_that_is_not_a_number_names_the_env():
    env = GymnasiumLine()
    with pytest.raises(
        ContractError, match="the env GymnasiumLine of benchmark walk: step returned 3 values"
    ):
        step_outcome((np.zeros(1), 0.0, False), env, "walk")
    with pytest.raises(ContractError, match="step returned NoneType"):
        step_outcome(None, env, "walk")
    with pytest.raises(ContractError, match="the reward 'high', which is not a number"):
        step_outcome((np.zeros(1), "high", False, {}), env, "walk")


def test_a_check_that_is_not_a_step_of_numbers_says_what_it_returned():
    assert check_metrics(seq.Step(metrics={"success": True})) == {"success": 1.0}
    with pytest.raises(TypeError, match="returned dict; expected seq.Step"):
        check_metrics({"success": 1.0})
    with pytest.raises(TypeError, match="metric 'success' = 'yes', which is not a number"):
        check_metrics(seq.Step(metrics={"success": "yes"}))


LINES = textwrap.dedent("""
    import numpy as np

    import seq


    class Line:
        action_space = None

        def start(self, seed):
            self.position, self.steps = seed, 0
            return np.array([float(seed)])

        def move(self, action):
            self.position += int(action[0])
            self.steps += 1
            return np.array([float(self.position)]), 1.0, self.position >= 3, self.steps >= 5


    class GymnasiumLine(Line):
        def reset(self, *, seed=None):
            return self.start(seed), {}

        def step(self, action):
            return (*self.move(action), {})


    class OldGymLine(Line):
        def reset(self, seed=None):
            return self.start(seed)

        def step(self, action):
            obs, reward, terminated, truncated = self.move(action)
            return obs, np.float32(reward), terminated or truncated, {}


    def line(name, env_type):
        @seq.benchmark(name=name, conditions=seq.conditions(tasks=["walk"], seeds=[0, 1]), max_steps=10)
        class Walk(seq.Benchmark):
            @seq.reset
            def reset(self, seed, variant):
                return env_type()

            @seq.check
            def check(self, env):
                return seq.Step(metrics={"position": env.position})

        return Walk


    GymnasiumWalk = line("gymnasium-walk", GymnasiumLine)
    OldGymWalk = line("old-gym-walk", OldGymLine)


    @seq.policy(name="one-right")
    class OneRight(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.ones(1)
""")


def test_an_eval_runs_an_env_of_either_api_to_the_same_episodes(tmp_path):
    (tmp_path / "lines.py").write_text(LINES)
    seq.deploy(tmp_path / "lines.py")
    episodes = {}
    for benchmark in ("gymnasium-walk", "old-gym-walk"):
        report = seq.eval.run("one-right", benchmark=benchmark, envs=1)
        episodes[benchmark] = sorted(
            (e.seed, e.status, e.steps, e.ended_by, e.metrics["return"], e.metrics["position"])
            for e in report.episodes
        )
    assert episodes["gymnasium-walk"] == [(0, "ok", 3, "env", 3.0, 3.0), (1, "ok", 2, "env", 2.0, 3.0)]
    assert episodes["old-gym-walk"] == episodes["gymnasium-walk"]
