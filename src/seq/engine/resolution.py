"""Resolve an eval (the first stage of `seq.engine.prepare`): the arms asked for; the benchmark,
the adapter and each arm's policy as versions of the record, their classes; each arm's parameter
values, the weights they name and the adapter they load. Fails only on what cannot be resolved (a
name not in the record, a parameter no side declares, a value its side refuses); what resolves
but cannot run is refused by `seq.engine.eval_checks`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from seq.authoring.adapter import Adapter, AdapterSpec, resolve_with_adapter
from seq.authoring.benchmark import BenchmarkSpec, spec_of
from seq.authoring.params import Parameter, settable
from seq.authoring.policy import Policy, policy_spec_of
from seq.engine.arms import Arm, build_arms
from seq.engine.request import EvalRequest
from seq.errors import SeqInputError
from seq.record.manifest import AdapterPin
from seq.record.store import Store, VersionRow
from seq.registry.adapter_checks import describe_transforms
from seq.registry.adapters import adapter_spec, load_adapter, resolve_adapter
from seq.registry.deploy import load_version, resolve

EVAL_PARAMETERS = {"steps_per_query": Parameter("steps_per_query", "int", None)}


@dataclass(frozen=True)
class ResolvedArm:
    """One arm as it runs: its policy's version and class (None: a served one), where it is
    served, and every side's parameter values."""

    arm: Arm
    policy: VersionRow
    policy_cls: type | None
    values: dict[str, dict[str, Any]]  # side ("policy", "benchmark", "adapter", "eval") -> name -> value
    asked: dict[str, Any]  # the benchmark values the policy asks for (`benchmark_parameters`)
    policy_url: str | None = None
    server: dict[str, Any] | None = None  # the served policy's greeting
    weights: dict[str, Any] | None = None  # the weights its parameters name, pinned by content
    adapter: Adapter | None = None  # the adapter, loaded with this arm's values
    adapter_pin: AdapterPin | None = None  # its version and lossy transforms, for the manifest


@dataclass(frozen=True)
class ResolvedEval:
    """The versions an eval runs, before it is checked and planned."""

    benchmark: VersionRow
    benchmark_cls: type
    adapter: VersionRow | None
    arms: list[ResolvedArm]

    @property
    def spec(self) -> BenchmarkSpec:
        return spec_of(self.benchmark_cls)


def resolve_eval(request: EvalRequest, store: Store) -> ResolvedEval:
    """The versions, classes and parameter values of each arm `request` asks for (a served policy
    is registered from its server's greeting)."""
    asked = build_arms(
        request.policy,
        request.params,
        vs=request.vs,
        vs_params=request.vs_params,
        sweep=request.sweep,
        arms=request.arms,
    )
    benchmark_row = resolve("benchmark", request.benchmark, store)
    benchmark_cls = load_version(benchmark_row)
    spec = spec_of(benchmark_cls)
    adapter_row = resolve_adapter(request.adapter, store) if request.adapter is not None else None
    adapter_declared = adapter_spec(adapter_row) if adapter_row is not None else None
    arms = [
        _resolve_arm(
            request,
            arm,
            request.policy_url if index == 0 else None,
            spec,
            adapter_row,
            adapter_declared,
            store,
        )
        for index, arm in enumerate(asked)
    ]
    return ResolvedEval(benchmark_row, benchmark_cls, adapter_row, arms)


def _resolve_arm(
    request: EvalRequest,
    arm: Arm,
    remote: str | None,
    spec: BenchmarkSpec,
    adapter_row: VersionRow | None,
    adapter_declared: AdapterSpec | None,
    store: Store,
) -> ResolvedArm:
    server = None
    policy_cls: type | None
    if remote is not None:
        from seq.serving.remote import register_remote

        served = register_remote(remote, request.policy_protocol, store, request.policy_name)
        policy_row, declared, server = served.row, served.parameters, served.server
        policy_cls = None
    else:
        policy_row = resolve("policy", arm.policy, store)
        policy_cls = type(arm.policy) if isinstance(arm.policy, Policy) else load_version(policy_row)
        declared = policy_spec_of(policy_cls).parameters
    policy_asks = _asked_by_policy(policy_cls, spec.setup_parameters, arm.params)
    try:
        values = _resolve_params(declared, spec, {**policy_asks, **arm.params}, adapter_declared)
    except SeqInputError as error:  # name the flag that set the value: --param, --sweep, --vs-param
        key = next((k for k in arm.params if str(error).startswith(f"--param {k}:")), None)
        if key is None or arm.flag(key) == "--param":
            raise
        raise SeqInputError(str(error).replace("--param", arm.flag(key), 1)) from None
    return ResolvedArm(
        arm=arm,
        policy=policy_row,
        policy_cls=policy_cls,
        values=values,
        asked=policy_asks,
        policy_url=remote,
        server=server,
    )


def pin_arms(resolved: ResolvedEval) -> ResolvedEval:
    """Each arm with the weights its policy's parameters name (read and pinned by content) and the
    adapter loaded with its values. Apart from `resolve_eval`: reading weights needs the policy's
    packages, which are checked first (`seq.engine.eval_checks.check_versions`)."""
    return replace(resolved, arms=[_pin(arm, resolved.adapter) for arm in resolved.arms])


def _pin(arm: ResolvedArm, adapter_row: VersionRow | None) -> ResolvedArm:
    weights_for = getattr(arm.policy_cls, "weights_for", None)
    if weights_for is not None:
        arm = replace(arm, weights=weights_for(arm.values["policy"]))
    if adapter_row is None:
        return arm
    adapter = load_adapter(adapter_row.ref, arm.values["adapter"])
    lossy = describe_transforms(adapter)["lossy"]
    pin = AdapterPin(adapter_row.name, adapter_row.version, adapter_row.sha256, adapter_row.label, lossy)
    return replace(arm, adapter=adapter, adapter_pin=pin)


def _resolve_params(
    policy_parameters: dict[str, Parameter],
    spec: BenchmarkSpec,
    params: Mapping[str, Any],
    adapter: AdapterSpec | None = None,
) -> dict:
    sides = {
        "policy": policy_parameters,
        "benchmark": spec.setup_parameters,
        "eval": EVAL_PARAMETERS,
    }
    values = resolve_with_adapter(params, sides, adapter)
    steps_per_query = values["eval"]["steps_per_query"]
    if steps_per_query is not None and steps_per_query < 1:
        raise SeqInputError(
            f"--param eval.steps_per_query must be 1 or more, got {steps_per_query}; "
            f"the eval can set: {settable(sides)}."
        )
    return values


def _asked_by_policy(
    policy_cls: type | None, setup: Mapping[str, Parameter], given: Mapping[str, Any]
) -> dict[str, Any]:
    """The benchmark setup values a policy asks for (its class's `benchmark_parameters`, such as
    `{"obs_mode": "state"}` for a policy that reads privileged state), where the benchmark declares
    them and the eval did not set them: a value given with `--param` always wins."""
    wanted = getattr(policy_cls, "benchmark_parameters", None) or {}
    return {
        f"benchmark.{name}": value
        for name, value in wanted.items()
        if name in setup and f"benchmark.{name}" not in given and name not in given
    }
