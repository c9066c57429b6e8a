"""The env `seq` drives, and what it reads of it: one definition for every place that resets or
steps a benchmark's env (the episode loop, a deploy's check, the observation check, the port).

- `@seq.reset(self, seed, variant)` returns an `Env`; `seq` then calls `env.reset(seed=seed)`,
  which may return gymnasium's `(obs, info)` or old gym's bare `obs` (`reset_env`).
- `env.step(action)` may return gymnasium's `(obs, reward, terminated, truncated, info)` or old
  gym's `(obs, reward, done, info)`; either is read as one `StepOutcome` (`step_outcome`). Old
  gym's `done` is `terminated`, or `truncated` where its info says `TimeLimit.truncated`.
- `@seq.check(self, env)` returns a `Step` whose metrics are numbers (`check_metrics`).
- `close()` and `render()` are optional: `seq` calls them only where the env has them.

A step or check that breaks this is a `ContractError` naming the env and its benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from seq.authoring.benchmark import BenchmarkSpec, Step
from seq.authoring.conditions import Condition

TRUNCATED_KEY = "TimeLimit.truncated"  # old gym's TimeLimit: the done was the time limit's


class ContractError(TypeError):
    """A policy's output that is not an action, or an env's `step` that breaks the gym contract."""


class Env(Protocol):
    """The env `@seq.reset` returns: gymnasium's or old gym's `reset` and `step`."""

    def reset(self, *, seed: int | None = None) -> Any:
        """gymnasium's `(obs, info)`, or old gym's `obs`."""
        ...

    def step(self, action: Any) -> Any:
        """gymnasium's `(obs, reward, terminated, truncated, info)`, or old gym's
        `(obs, reward, done, info)`."""
        ...


class Reset(NamedTuple):
    """A condition's env, reset: the env, its first observation and the reset's info."""

    env: Any
    observation: Any
    info: dict[str, Any]


class StepOutcome(NamedTuple):
    """One step of either API, read the same way."""

    observation: Any
    reward: float
    terminated: bool
    truncated: bool
    info: Any

    @property
    def done(self) -> bool:
        """The env ended the episode, either way."""
        return self.terminated or self.truncated


def reset_observation(env: Env, seed: int) -> tuple[Any, dict[str, Any]]:
    """`env.reset(seed=seed)`, as `(obs, info)` from either API (old gym's info is empty)."""
    output = env.reset(seed=seed)
    if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict):
        return output[0], output[1]
    return output, {}


def reset_env(
    benchmark: Any,
    spec: BenchmarkSpec,
    condition: Condition,
    on_env: Callable[[Any], object] | None = None,
) -> Reset:
    """The benchmark's `@seq.reset` for `condition`, then the env's `reset(seed=condition.seed)`.
    `on_env` is given the env before its reset, so a caller keeps it (to close it) even when the
    reset raises."""
    env = getattr(benchmark, spec.hooks["reset"])(condition.seed, condition)
    if on_env is not None:
        on_env(env)
    observation, info = reset_observation(env, condition.seed)
    return Reset(env, observation, info)


def _env_name(env: Any, benchmark: str) -> str:
    return f"the env {type(env).__name__} of benchmark {benchmark}"


def step_outcome(output: Any, env: Any, benchmark: str) -> StepOutcome:
    """What `env.step` returned (`output`), either API, as a `StepOutcome`; a `ContractError`
    naming the env of `benchmark` when it is neither."""
    if type(output) is tuple and len(output) == 5 and type(output[1]) is float:  # gymnasium's, as usual
        return StepOutcome(output[0], output[1], bool(output[2]), bool(output[3]), output[4])
    if not isinstance(output, (tuple, list)) or len(output) not in (4, 5):
        got = f"{len(output)} values" if isinstance(output, (tuple, list)) else type(output).__name__
        raise ContractError(
            f"{_env_name(env, benchmark)}: step returned {got}; expected gymnasium's 5 (obs, reward, "
            "terminated, truncated, info) or gym's 4 (obs, reward, done, info)."
        )
    try:
        reward = float(output[1])
    except (TypeError, ValueError):
        raise ContractError(
            f"{_env_name(env, benchmark)}: step returned the reward {output[1]!r}, which is not a number."
        ) from None
    if len(output) == 5:
        return StepOutcome(output[0], reward, bool(output[2]), bool(output[3]), output[4])
    info = output[3]
    truncated = bool(output[2]) and isinstance(info, Mapping) and bool(info.get(TRUNCATED_KEY, False))
    return StepOutcome(output[0], reward, bool(output[2]) and not truncated, truncated, info)


def step_env(env: Env, action: Any, benchmark: str) -> StepOutcome:
    """`env.step(action)`, read as a `StepOutcome` (see `step_outcome`)."""
    return step_outcome(env.step(action), env, benchmark)


def check_metrics(step: Any) -> dict[str, float]:
    """The metrics of what `@seq.check` returned, as floats; a `TypeError` saying what is wrong
    when it is not a `Step` of numbers."""
    if not isinstance(step, Step):
        raise TypeError(
            f"@seq.check returned {type(step).__name__}; expected seq.Step(done=..., metrics={{...}})."
        )
    if not isinstance(step.metrics, Mapping):
        raise TypeError(
            f"@seq.check returned seq.Step(metrics={step.metrics!r}); expected a dict of numbers."
        )
    metrics = {}
    for key, value in step.metrics.items():
        try:
            metrics[str(key)] = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"@seq.check returned metric {key!r} = {value!r}, which is not a number."
            ) from None
    return metrics


def close_env(env: Any) -> None:
    """Close an env where it can be closed; an error closing it is not the caller's to report."""
    close = getattr(env, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            pass
