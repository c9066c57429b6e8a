"""What a worker process is given (`seq.engine.worker`): the benchmark and each arm as it runs
them. Sent over the runner ↔ worker channel (`seq.engine.wire`) as plain values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ArmConfig:
    """One arm as a worker runs it: the policy class, its parameters and the benchmark's."""

    policy_ref: dict[str, Any]
    setup_parameters: dict[str, Any] = field(default_factory=dict)
    policy_parameters: dict[str, Any] = field(default_factory=dict)
    steps_per_query: int | None = None
    adapter_ref: dict[str, Any] | None = None  # the adapter version's ref, when the eval names one
    adapter_parameters: dict[str, Any] = field(default_factory=dict)
    policy_url: str | None = None  # the policy is served there (`--serve`, `--policy-url`)
    protocol: str = "seq"  # the server's protocol: seq, openpi or vla-eval
    image_encoding: str = "raw"  # how images travel to the server: raw, jpeg, png (vla-eval)


@dataclass(frozen=True)
class WorkerConfig:
    """What every worker of an eval needs: the benchmark class and each arm."""

    benchmark_ref: dict[str, Any]
    arms: dict[str, ArmConfig]
    observers: list[dict[str, Any]] = field(default_factory=list)
    envs_per_worker: int = 1  # episodes a worker runs side by side (`seq.engine.lockstep`)
    # seq chose envs_per_worker: its slots beyond the first open once they pay (`Lockstep`)
    open_slots_as_they_pay: bool = False
