"""An eval's manifest: what it ran, pinned by content, and where (seq, machine, isolation).

Written when the eval is stored (versions, arms, seeds, parameters) and completed as it runs (the
workers' environment, the image, the volume version read, the sequential test's decision). Every
plane reads it through these types; the record stores it as JSON (`seq.record.typed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SeqBuild:
    """The seq that ran the eval."""

    version: str
    git_sha: str | None = None


@dataclass(frozen=True)
class Pinned:
    """A registered version, pinned by the sha256 of its content."""

    name: str
    version: int
    sha256: str

    @property
    def label(self) -> str:
        return f"{self.name}@v{self.version}"


@dataclass(frozen=True)
class AdapterPin:
    """The adapter an arm runs, pinned, with the lossy transforms its parameters give."""

    name: str
    version: int
    sha256: str
    label: str
    lossy: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ArmManifest:
    """One arm: its policy pinned, the values given (`params`) and every value used (`parameters`,
    side → name → value, sides `policy`, `benchmark`, `eval` and `adapter`)."""

    name: str
    policy: str  # the policy's label, NAME@vN
    policy_name: str
    policy_version: int
    policy_sha256: str
    params: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    asked: dict[str, str] = field(default_factory=dict)  # setup values the policy asked for (not given)
    in_memory: str | None = None  # the key of a policy object held by the process that runs the eval
    policy_url: str | None = None  # served there, not loaded
    protocol: str = "seq"  # ... speaking this protocol
    server: dict[str, Any] | None = None  # what that server said: url, protocol, its greeting
    image_encoding: str = "raw"  # how the served policy was sent images: raw, jpeg, png
    adapter: AdapterPin | None = None
    observation: dict[str, Any] | None = None  # what the policy was checked to take, key by key
    # the weights the policy's parameters name (a policy's `weights_for`): class, path, sha256
    weights: dict[str, Any] | None = None


@dataclass(frozen=True)
class Gpu:
    declared: str
    used: str


@dataclass(frozen=True)
class ImageUsed:
    key: str
    setup_s: float
    cached: bool


@dataclass(frozen=True)
class AssetsRead:
    volume: str
    version: str
    kind: str
    seen: str | None = None  # how the workers saw the volume (read-only mount, copy)


@dataclass(frozen=True)
class SecretsGiven:
    names: list[str]
    variables: list[str]  # environment variable names; values are never recorded


@dataclass(frozen=True)
class MemoryLimit:
    total: str
    per_worker: str


@dataclass(frozen=True)
class Environment:
    """The workers' Python and the versions of the packages seq tracks."""

    python: str
    implementation: str = ""
    platform: str = ""
    machine: str = ""
    packages: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SequentialDecision:
    """Where a sequential test stopped, and why (`seq.engine.sequential`)."""

    decision: str
    look: int
    looks: int
    pairs_used: int
    pairs_planned: int
    statistic: float | None
    boundary: float | None
    interval: dict[str, Any]  # the repeated confidence interval of B − A
    metric: str
    alpha: float
    test: str


@dataclass(frozen=True)
class Manifest:
    """Everything needed to say what an eval ran and to run it again."""

    seq: SeqBuild
    benchmark: Pinned
    policy: Pinned  # the first arm's
    adapter: AdapterPin | None = None  # the first arm's
    arms: list[ArmManifest] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)  # the first arm's
    default_max_steps: int | None = None
    declared: dict[str, Any] = field(default_factory=dict)  # the benchmark's declarations
    # Written as the eval runs:
    workers: int | None = None
    envs_per_worker: int | None = None
    gpu: Gpu | None = None
    image: ImageUsed | None = None
    assets: AssetsRead | None = None
    secrets: SecretsGiven | None = None
    memory: MemoryLimit | None = None
    environment: Environment | None = None
    sequential: SequentialDecision | None = None

    @property
    def arm_names(self) -> list[str]:
        """The arms' names in order; `[""]` for an eval of one unnamed arm."""
        return [arm.name for arm in self.arms] or [""]

    def arm(self, name: str) -> ArmManifest:
        for arm in self.arms:
            if arm.name == name:
                return arm
        raise KeyError(name)
