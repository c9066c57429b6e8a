"""Episode observers: what watches an episode step by step (recordings, trajectories).

The episode loop calls every observer the worker was given; with none it pays one empty check
per step. An observer that raises is switched off for the rest of that episode and its error is
kept in the episode's `artifacts["observer_errors"]`: watching never fails an episode.

An observer still writing an episode's files when it ends (a video being encoded) returns a
`Future` of its artifacts. A worker process then runs its next episode meanwhile and sends this
one's result once the files are complete (`Finishing`): an episode's record never names a
half-written file, and a spare core or a GPU absorbs the writing instead of the eval waiting on it.
"""

from __future__ import annotations

import time
import traceback
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from seq.record.episode import EpisodeResult
from seq.record.work import WorkItem

# How long an episode's result waits for its observers' files before it is sent without them.
FINISH_TIMEOUT_S = 120.0


class EpisodeObserver(Protocol):
    """Sees each episode from reset to its result; returns artifact paths at the end."""

    def begin(self, item: WorkItem, env: Any, obs: Any) -> None:
        """After `env.reset`: the first observation."""

    def step(self, env: Any, obs: Any, action: Any, reward: float, act_seed: int) -> None:
        """After each `env.step`: the new observation, the action taken and the seed its act carried."""

    def end(self, result: EpisodeResult) -> dict[str, str] | Future[dict[str, str]]:
        """After the episode: what it wrote, as `{kind: path}` (empty when it recorded nothing), or
        a `Future` of that while the files are still being written (its exception: what failed)."""


@dataclass
class Finishing:
    """An ended episode and what its observers still write: `finish` adds their artifacts (or
    their errors, to `observer_errors`) to the result once they are done."""

    result: EpisodeResult
    errors: list[str] = field(default_factory=list)
    pending: list[tuple[str, Future[dict[str, str]]]] = field(default_factory=list)
    ended_at: float = field(default_factory=time.monotonic)

    def add(self, observer: Any, ended: dict[str, str] | Future[dict[str, str]]) -> None:
        """What `observer.end` returned."""
        if isinstance(ended, Future):
            self.pending.append((type(observer).__name__, ended))
        else:
            self.result.artifacts.update(ended)

    def done(self) -> bool:
        """Whether every file is written (or its writing failed, or ran out of time)."""
        expired = time.monotonic() - self.ended_at > FINISH_TIMEOUT_S
        return expired or all(future.done() for _, future in self.pending)

    def finish(self) -> EpisodeResult:
        """The result with the observers' artifacts, waiting for them at most `FINISH_TIMEOUT_S`
        after the episode ended; a file not written by then is cancelled and not named."""
        for name, future in self.pending:
            remaining = max(0.0, self.ended_at + FINISH_TIMEOUT_S - time.monotonic())
            try:
                self.result.artifacts.update(future.result(timeout=remaining))
            except TimeoutError:
                future.cancel()
                self.errors.append(f"{name}.end: its files were not written within {FINISH_TIMEOUT_S:.0f} s.")
            except Exception as error:
                self.errors.append(f"{name}.end: {''.join(traceback.format_exception(error))}")
        self.pending.clear()
        if self.errors:
            self.result.artifacts["observer_errors"] = "\n".join(self.errors)
        return self.result


# Observer kinds a worker can build from the plain specs in its config ("module:Class").
OBSERVER_KINDS = {
    "video": "seq.capture.video:VideoRecorder",
    "trajectory": "seq.capture.trajectory:TrajectoryWriter",
    "trace": "seq.capture.trace:TraceWriter",
}


def build_observers(specs: list[dict[str, Any]]) -> list[EpisodeObserver]:
    """Instantiate the observers an eval asked for: each spec is `{"kind": ..., **options}`."""
    import importlib

    observers = []
    for spec in specs:
        module_name, _, class_name = OBSERVER_KINDS[spec["kind"]].partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        observers.append(cls(**{k: v for k, v in spec.items() if k != "kind"}))
    return observers
