"""Batched envs: N worlds of one simulator, advanced by one physics step together.

A benchmark declared `@seq.benchmark(batched=True)` (a MuJoCo Warp port, `seq.port`) holds one
simulator of N worlds per worker; its `@seq.reset` hands each episode an env for one world. Such
an env has, besides gym's `reset`:

- `batch`: the object shared by the worlds; `batch.step()` advances every world once;
- `stage(action)`: holds this world's action for the next `batch.step()`;
- `outcome()`: this world's step output after it (gym's 5-tuple, or old gym's 4);
- `release()` (optional): the episode ended; its world may be handed to the next reset.

The episode loop (`seq.engine.episode`) stages the action and yields a `BatchStep` where a plain
env's `step` would run; whoever drives the episode advances the batch: `EpisodeRunner.run` at
once (one episode at a time), `seq.engine.lockstep` once every running episode has staged its
action, so one worker steps N worlds and asks the policy for their N actions at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BatchStep:
    """What an episode yields when its world's action is staged: advance `batch`, send None."""

    batch: Any


def batch_of(env: Any) -> Any | None:
    """The batch a batched env's world belongs to, or None for a plain env."""
    batch = getattr(env, "batch", None)
    if batch is None:
        return None
    missing = [name for name in ("stage", "outcome") if not callable(getattr(env, name, None))]
    if missing or not callable(getattr(batch, "step", None)):
        raise TypeError(
            f"{type(env).__name__} has a `batch` but no {', '.join(missing) or 'batch.step'}: a batched "
            "env needs batch.step(), stage(action) and outcome() (seq.engine.batch)."
        )
    return batch


def step_alone(env: Any, action: Any) -> Any:
    """One step of an env on its own (a deploy's check): a batched env's world is staged and its
    batch stepped at once, a plain env's `step` called."""
    batch = batch_of(env)
    if batch is None:
        return env.step(action)
    env.stage(action)
    batch.step()
    return env.outcome()


def release(env: Any) -> None:
    """Tell a batched env its episode ended (its world is free), where it asks to be told."""
    free = getattr(env, "release", None)
    if callable(free):
        free()
