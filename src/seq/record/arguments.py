"""An eval's arguments as stored: what was asked, resolved (labels, not objects), so that a resume
or another shard runs the same eval. Shards of one eval must agree on everything but how each
runs (`envs`, `envs_per_worker`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ArmArguments:
    """One arm as asked: its name, its policy's label and the parameter values given (as text)."""

    name: str
    policy: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SequentialOptions:
    """Stop as soon as the group-sequential test at level `alpha` decides on `metric`, looking at
    most `looks` times."""

    alpha: float = 0.05
    looks: int = 5
    metric: str = "success"


@dataclass(frozen=True)
class ServeOptions:
    """Each arm's policy behind a batching server."""

    max_batch_size: int
    max_wait_ms: float = 10.0


@dataclass(frozen=True, kw_only=True)
class EvalArguments:
    arms: list[ArmArguments] = field(default_factory=list)
    benchmark: str  # the benchmark's label, NAME@vN
    envs: int | None = None
    envs_per_worker: int = 1
    # seq chose envs_per_worker (`seq.engine.side_by_side`): decided again where the eval runs
    envs_per_worker_chosen: bool = False
    suites: list[str] = field(default_factory=list)
    tasks: list[str] | None = None
    seeds: list[int] | None = None
    max_steps: int | None = None
    trials: int = 1
    threshold: float = 0.05
    record: str | None = None  # all | first | none; None: the benchmark's render= says
    trajectories: bool = False
    observers: list[dict[str, Any]] = field(default_factory=list)  # see seq.record.artifacts
    sequential: SequentialOptions | None = None
    serve: ServeOptions | None = None
    adapter: str | None = None  # the adapter's label
    allow_cpu: bool = False

    def what(self) -> EvalArguments:
        """These arguments without how one process runs them: what every shard must agree on."""
        return replace(self, envs=None, envs_per_worker=1, envs_per_worker_chosen=False)
