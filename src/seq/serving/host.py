"""The policy a server hosts: its version, K loaded instances (replicas) and its parameters.

`run` is what a replica's thread executes for one gathered batch: requests that share parameters
and an action space go to a batched `@seq.infer` as one call, otherwise each is called alone; every
request gets its own outcome, a chunk or the traceback of what it raised.
"""

from __future__ import annotations

import inspect
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from seq.authoring.begin import EpisodeStart
from seq.authoring.params import Parameter
from seq.authoring.policy import Policy, PolicySpec, policy_spec_of
from seq.errors import SeqInputError
from seq.record.store import Store, VersionRow
from seq.registry.instances import equip, load_policy
from seq.serving.inline import as_chunk, split_batch
from seq.serving.planning import planning_for
from seq.serving.spaces import describe_space

Outcome = tuple[bool, Any]  # (True, chunk) or (False, traceback text)


@dataclass
class Request:
    """One act waiting for the policy; `reply` gets its Outcome, on the event loop."""

    obs: Any
    seed: int | None
    instruction: str | None
    params: dict[str, Any]
    params_key: str
    space: Any
    reply: Callable[[Outcome], None]
    prepare: Callable[[Any], Any] | None = None  # run on obs in the replica's thread (image decoding)
    source: int = 0  # the connection it came from
    arrived: float = 0.0
    slot: int = 0  # which of the connection's side-by-side episodes asks
    plans: list[dict[str, Any]] = field(default_factory=list)  # a composite's plans this act first used
    group: tuple = field(init=False)

    def __post_init__(self) -> None:
        self.group = (self.params_key, id(self.space))

    @property
    def robot(self) -> tuple[int, int]:
        """The environment that asks: its connection and episode slot (a composite's planner's key)."""
        return (self.source, self.slot)


def _load(policy: Any, replicas: int, store: Store | None) -> tuple[type, VersionRow, list[Policy]]:
    from seq.registry.deploy import load_version, resolve

    store = store or Store()
    instance = policy if isinstance(policy, Policy) else None
    if instance is not None and replicas != 1:
        raise SeqInputError("serve: a policy instance can only be served with replicas=1; pass its class.")
    if not (instance is not None or inspect.isclass(policy) or isinstance(policy, str)):
        raise SeqInputError(f"serve: expected a policy name, class or instance, got {policy!r}.")
    row = resolve("policy", type(instance) if instance is not None else policy, store)
    cls = type(instance) if instance is not None else load_version(row)
    if instance is not None:
        equip(instance, policy_spec_of(cls))
        return cls, row, [instance]
    return cls, row, [load_policy(cls) for _ in range(replicas)]


def params_key(values: dict[str, Any]) -> str:
    return json.dumps(values, sort_keys=True, default=repr)


class PolicyHost:
    """A loaded policy, ready to run batches; built by `PolicyHost.load`."""

    def __init__(self, cls: type, row: VersionRow, instances: list[Policy], params: dict[str, Any]) -> None:
        self.cls, self.row, self.instances = cls, row, instances
        self.spec: PolicySpec = policy_spec_of(cls)
        self._infers = [getattr(instance, self.spec.hooks["infer"]) for instance in instances]
        self.plannings = [planning_for(instance, self.spec) for instance in instances]
        self.defaults = {p.name: p.default for p in self.parameters.values()}
        self.defaults = self.coerce(params, "serve")
        # An adapter applied here rather than in the workers: for a benchmark with secrets, whose
        # workers' environment no code but the benchmark's may read.
        self.adapter: Any = None

    @classmethod
    def load(
        cls, policy: Any, replicas: int = 1, params: dict[str, Any] | None = None, store: Store | None = None
    ) -> PolicyHost:
        """Resolve a name, `NAME@vN`, class or instance, and load `replicas` instances."""
        klass, row, instances = _load(policy, replicas, store)
        return cls(klass, row, instances, params or {})

    @property
    def parameters(self) -> dict[str, Parameter]:
        return self.spec.parameters

    def coerce(self, given: dict[str, Any] | None, where: str) -> dict[str, Any]:
        """Every declared parameter's value: the defaults (the server's, then the policy's)
        overridden by `given`, typed; an undeclared name raises SeqInputError."""
        values = dict(self.defaults)
        if given is not None and not isinstance(given, dict):
            raise SeqInputError(f"{where}: parameters must be a mapping of name to value.")
        for name, raw in (given or {}).items():
            if name not in self.parameters:
                declared = ", ".join(self.parameters) or "none"
                raise SeqInputError(
                    f"{where}: {self.spec.name} declares no parameter {name!r}; it declares: {declared}."
                )
            values[name] = self.parameters[name].coerce(raw, where)
        return values

    def metadata(self) -> dict[str, Any]:
        """The policy's part of the server's hello: version, parameters, declared spaces."""
        meta: dict[str, Any] = {
            "policy": {
                "name": self.row.name,
                "version": self.row.version,
                "label": self.row.label,
                "sha256": self.row.sha256,
            },
            "batched": self.spec.batched,
            "plan_every_s": self.spec.plan_every_s,  # a composite policy's planner (None: none)
            "parameters": {
                p.name: {**p.describe(), "value": self.defaults[p.name]}
                for p in self.parameters.values()
            },
        }
        for key in ("observation_space", "action_space"):
            declared = getattr(self.cls, key, None)
            if declared is not None:
                meta[key] = describe_space(declared)
        return meta

    def begin(self, replica: int, episode: EpisodeStart, robot: tuple[int, int] | None = None) -> Outcome:
        """Tell replica `replica`'s instance an episode starts (its `@seq.begin`; called in that
        replica's thread, between batches): (True, None), or (False, the traceback). `robot`
        (connection, slot): whose episode, for a composite policy's planner."""
        try:
            self.spec.begin(self.instances[replica], episode)
        except Exception:
            return False, traceback.format_exc()
        planning = self.plannings[replica]
        if planning is not None and robot is not None:
            planning.begin(robot)
        return True, None

    def disconnected(self, replica: int, source: int) -> None:
        """A client left: its environments' planners stop."""
        planning = self.plannings[replica]
        if planning is not None:
            planning.end_where(lambda robot: robot[0] == source)

    def run(self, replica: int, batch: list[Request]) -> list[Outcome]:
        """Run one gathered batch on replica `replica`'s instance (called in that replica's thread)."""
        instance, infer = self.instances[replica], self._infers[replica]
        groups: dict[tuple, list[int]] = {}
        outcomes: list[Outcome] = [(False, "not run")] * len(batch)
        planning = self.plannings[replica]
        composite = planning is not None
        for index, request in enumerate(batch):
            if request.prepare is not None or self.adapter is not None or composite:
                try:
                    if request.prepare is not None:
                        request.obs = request.prepare(request.obs)
                    if self.adapter is not None:
                        request.obs = self.adapter.transform_obs(request.obs)
                    if planning is not None:  # the environment's latest plan
                        request.instruction, request.plans = planning.use(
                            request.robot, request.obs, request.instruction
                        )
                except Exception:
                    outcomes[index] = (False, traceback.format_exc())
                    continue
            groups.setdefault(request.group, []).append(index)
        for indices in groups.values():
            first = batch[indices[0]]
            instance.action_space = first.space
            if self.spec.batched:
                try:
                    outputs = infer(
                        [batch[i].obs for i in indices],
                        seed=[batch[i].seed for i in indices],
                        instruction=[batch[i].instruction for i in indices],
                        **first.params,
                    )
                    chunks = [self._chunk(out) for out in split_batch(outputs, len(indices))]
                    for i, chunk in zip(indices, chunks, strict=True):
                        outcomes[i] = (True, chunk)
                except Exception:
                    failure = traceback.format_exc()
                    for i in indices:
                        outcomes[i] = (False, failure)
                continue
            for i in indices:
                request = batch[i]
                try:
                    output = infer(
                        request.obs, seed=request.seed, instruction=request.instruction, **first.params
                    )
                    outcomes[i] = (True, self._chunk(output))
                except Exception:
                    outcomes[i] = (False, traceback.format_exc())
        return outcomes

    def _chunk(self, output: Any) -> np.ndarray:
        chunk = as_chunk(output)
        if chunk.dtype.kind not in "biufc":
            raise TypeError(f"infer returned actions of dtype {chunk.dtype}; actions must be numbers.")
        return as_chunk(self.adapter.transform_chunk(chunk)) if self.adapter is not None else chunk
