"""Episode observers: what watches an episode step by step (recordings, trajectories).

The episode loop calls every observer the worker was given; with none it pays one empty check
per step. An observer that raises is switched off for the rest of that episode and its error is
kept in the episode's `artifacts["observer_errors"]`: watching never fails an episode.
"""

from __future__ import annotations

from typing import Any, Protocol

from seq.record.episode import EpisodeResult
from seq.record.store import WorkItem


class EpisodeObserver(Protocol):
    """Sees each episode from reset to its result; returns artifact paths at the end."""

    def begin(self, item: WorkItem, env: Any, obs: Any) -> None:
        """After `env.reset`: the first observation."""

    def step(self, env: Any, obs: Any, action: Any, reward: float, act_seed: int) -> None:
        """After each `env.step`: the new observation, the action taken and the seed its act carried."""

    def end(self, result: EpisodeResult) -> dict[str, str]:
        """After the episode: what it wrote, as `{kind: path}` (empty when it recorded nothing)."""


# Observer kinds a worker can build from the plain specs in its config ("module:Class").
OBSERVER_KINDS = {
    "video": "seq.record.video:VideoRecorder",
    "trajectory": "seq.record.trajectory:TrajectoryWriter",
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
