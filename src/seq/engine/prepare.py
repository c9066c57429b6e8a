"""Prepare an eval: resolve versions and parameters, check compatibility, plan and store the work
items before any episode runs (`start_eval`), or only show them (`dry_run`)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from seq._version import __version__, git_sha
from seq.authoring.adapter import AdapterSpec, resolve_with_adapter
from seq.authoring.benchmark import BenchmarkSpec, spec_of
from seq.authoring.params import Parameter, settable
from seq.authoring.policy import Policy, policy_spec_of
from seq.engine.arms import Arm, build_arms
from seq.engine.capacity import capped_workers
from seq.engine.observation_fit import check_compatibility
from seq.engine.plan import plan
from seq.engine.policy_requirements import check_policy_declarations
from seq.engine.request import EvalRequest
from seq.engine.sample import sample_in_isolation
from seq.engine.sequential import check_sequential
from seq.engine.side_by_side import SideBySide, auto_side_by_side, episodes
from seq.engine.worker_isolation import check_gpu, check_isolation
from seq.errors import SeqInputError
from seq.record.arguments import ArmArguments, EvalArguments, SequentialOptions, ServeOptions
from seq.record.manifest import AdapterPin, ArmManifest, Manifest, Pinned, SeqBuild
from seq.record.paths import artifact_folder
from seq.record.states import IMAGE_ENCODINGS, ImageEncoding, PolicyProtocol
from seq.record.store import EvalRow, Store, VersionRow, WorkItem
from seq.registry.adapters import adapter_spec, describe_transforms, load_adapter, resolve_adapter
from seq.registry.builtins import SUGGESTED_ADAPTERS, check_installed
from seq.registry.deploy import load_version, remember_instance, resolve
from seq.stats.paired import check_threshold

EVAL_PARAMETERS = {"steps_per_query": Parameter("steps_per_query", "int", None)}


def default_envs() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _resolve_params(
    policy_parameters: dict[str, Parameter],
    benchmark_row: VersionRow,
    params: Mapping[str, Any],
    adapter: AdapterSpec | None = None,
) -> dict:
    benchmark_spec = spec_of(load_version(benchmark_row))
    sides = {
        "policy": policy_parameters,
        "benchmark": benchmark_spec.setup_parameters,
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


def check_envs(envs: int | None) -> int:
    if envs is None:
        return default_envs()
    if isinstance(envs, bool) or not isinstance(envs, int) or envs < 1:
        raise SeqInputError(f"--envs must be a positive integer, got {envs!r}.")
    return envs


def check_envs_per_worker(
    request: EvalRequest, arms: list[Arm], policies: list[type | None] | None = None
) -> None:
    """Several episodes per worker ask for their acts at once: refused where nothing would batch
    them (an inline policy that takes one observation at a time, an openpi or vla-eval server, a
    policy object that runs its episodes in this process). `policies`: each arm's class, once
    resolved (None: a served one)."""
    count = request.envs_per_worker
    if count is None:  # left to the eval: `side_by_side`
        return
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SeqInputError(f"--envs-per-worker must be a positive integer, got {count!r}.")
    if count == 1:
        return
    if request.engine == "ray":
        raise SeqInputError(
            f"--envs-per-worker {count} runs on local worker processes; with --engine ray use 1."
        )
    if request.policy_url is not None and request.policy_protocol != PolicyProtocol.SEQ:
        raise SeqInputError(
            f"--envs-per-worker {count} sends several episodes' acts in one message, which a "
            f"{request.policy_protocol} server does not take; use --envs-per-worker 1."
        )
    if any(isinstance(arm.policy, Policy) for arm in arms):
        raise SeqInputError(
            f"envs_per_worker={count} runs on worker processes, but a policy object in this process "
            "runs its episodes here, one at a time: pass the policy's name or envs_per_worker=1."
        )
    for policy_cls in policies or ():
        spec = policy_spec_of(policy_cls) if policy_cls is not None else None
        if spec is not None and not request.serve and not spec.batched:
            raise SeqInputError(
                f"--envs-per-worker {count} asks the policy for several episodes' acts at once, but "
                f"{spec.name} takes one observation at a time: serve it (--serve) or declare "
                "@seq.infer(batched=True)."
            )


def _side_by_side(
    request: EvalRequest, arms: list[ArmManifest], spec: BenchmarkSpec, items: list[WorkItem], workers: int
) -> SideBySide:
    """The episodes each worker runs at once: as asked, else as `seq.engine.side_by_side` decides."""
    if request.envs_per_worker is not None:
        count = request.envs_per_worker
        return SideBySide(count, f"{episodes(count)}, as asked (--envs-per-worker)")
    alone = None
    if request.engine != "local":
        alone = "Ray's workers run one"
    elif any(arm.in_memory is not None for arm in arms):
        alone = "the policy object runs in this process"
    elif any(arm.protocol != PolicyProtocol.SEQ for arm in arms):
        article = "an" if request.policy_protocol == PolicyProtocol.OPENPI else "a"
        alone = f"{article} {request.policy_protocol} server takes one act a message"
    elif not all(_takes_act_batch(arm.server) for arm in arms):
        alone = "its seq server answers one act a message (a seq from before act_batch)"
    elif not request.serve and any(arm.policy_url is None for arm in arms):
        alone = "the policy runs inline (--envs-per-worker N asks a batched one for its batches)"
    elif any(item.condition.timeout_s is not None for item in items):
        # an episode's timeout_s is wall time, which the episodes side by side share: each would
        # be timed out by the others' steps (and a worker killed by the watchdog)
        alone = "its episodes have a timeout_s, and episodes side by side share their wall time"
    elif spec.batched:  # its setup sizes its worlds: more episodes than worlds find none to claim
        alone = "a batched benchmark holds as many worlds as its setup makes (--envs-per-worker N)"
    declared = spec.declared
    return auto_side_by_side(
        alone=alone,
        items=len(items),
        workers=workers,
        env_memory=declared.get("env_memory"),
        memory=declared.get("memory"),
    )


def _takes_act_batch(server: dict[str, Any] | None) -> bool:
    """The server's greeting (an arm's `server`; None: served by this seq) offers `act_batch`."""
    if server is None:
        return True
    metadata = server.get("metadata")
    capabilities = metadata.get("capabilities") if isinstance(metadata, dict) else None
    return isinstance(capabilities, dict) and bool(capabilities.get("act_batch"))


@dataclass(frozen=True)
class PreparedEval:
    """An eval validated and planned, not stored yet: what `start_eval` stores, `dry_run` shows."""

    eval_id: str
    policy: VersionRow
    benchmark: VersionRow
    arguments: EvalArguments
    manifest: Manifest
    items: list[WorkItem]
    workers: int
    side_by_side: SideBySide  # the episodes each worker runs at once, and why


def start_eval(request: EvalRequest, store: Store) -> EvalRow:
    """Validate the request, plan the work items and store the eval before any episode runs."""
    prepared = prepare_eval(request, store)
    eval_id, arguments = prepared.eval_id, prepared.arguments
    # An image that fails to build, a volume or a secret missing: refused before the eval is stored.
    check_isolation(prepared.benchmark.declared.get("declared", {}), prepared.benchmark.label)
    existing = store.get_eval(eval_id)
    if existing is None:
        try:
            store.create_eval(
                eval_id, prepared.policy, prepared.benchmark, arguments, prepared.manifest, prepared.items
            )
        except sqlite3.IntegrityError:  # another shard created it a moment ago
            existing = store.get_eval(eval_id)
    if existing is not None:
        if arguments.what() != existing.arguments.what():
            raise SeqInputError(
                f"--eval-id {eval_id}: an eval with this id exists with other arguments; "
                "every shard of one eval must be started with the same ones."
            )
        return existing
    return store.get_eval(eval_id)  # type: ignore[return-value]


def _value_source(arm: ArmManifest, flagged: Arm | None, side: str, name: str) -> str:
    """Where an arm's value came from: the flag that set it (`--param`, `--sweep`, `--vs-param`),
    the policy asking the benchmark for it, the server a served policy runs on, or the declaring
    side's default."""
    key = f"{side}.{name}" if f"{side}.{name}" in arm.params else name if name in arm.params else None
    if key is not None:
        return flagged.flag(key) if flagged is not None else "--param"
    if f"{side}.{name}" in arm.asked:
        return f"asked by {arm.policy}"
    if side == "policy" and arm.policy_url is not None:
        return "the server's"  # what it was started with (`--param`), else the policy's default
    return f"{side} default"


def dry_run(request: EvalRequest, store: Store) -> dict[str, Any]:
    """What the eval would run, without running or storing it: each arm's parameter values and where
    each came from (`--param` or the declaring side's default), the episodes, and at most how many
    policy queries (every episode to `max_steps`, one query per `steps_per_query` actions)."""
    for option, eval_id in (("resume", request.resume), ("rerun-failed", request.rerun_failed)):
        if eval_id is not None:
            raise SeqInputError(
                f"--dry-run plans a new eval, and --{option} runs a stored one: "
                f"`seq eval status {eval_id}` shows what it has left."
            )
    prepared = prepare_eval(request, store)
    default_steps = prepared.manifest.default_max_steps
    assert default_steps is not None  # a new eval's manifest has its benchmark's limit
    # the flag that set each value (--param, --sweep, --vs-param), arm by arm in the same order
    asked = build_arms(
        request.policy, request.params, vs=request.vs, vs_params=request.vs_params,
        sweep=request.sweep, arms=request.arms,
    )  # fmt: skip
    arms = []
    for index, arm in enumerate(prepared.manifest.arms):
        flagged = asked[index] if index < len(asked) else None
        mine = [item for item in prepared.items if item.arm in ("", arm.name)]
        per_query = arm.parameters["eval"].get("steps_per_query") or 1
        parameters = {
            f"{side}.{name}": {"value": value, "from": _value_source(arm, flagged, side, name)}
            for side, values in arm.parameters.items()
            for name, value in values.items()
        }
        arms.append(
            {
                "arm": arm.name,
                "policy": arm.policy,
                "parameters": parameters,
                "episodes": len(mine),
                "max_policy_queries": sum(
                    -(-(i.condition.max_steps or default_steps) // per_query) for i in mine
                ),
            }
        )
    return {
        "benchmark": prepared.benchmark.label,
        "episodes": len(prepared.items),
        "arms": arms,
        "adapter": prepared.arguments.adapter,
        "suggestion": _suggestion(request, prepared),
        "workers": prepared.workers,
        "envs_per_worker": prepared.side_by_side.count,
        "envs_per_worker_why": prepared.side_by_side.why,
    }


def _suggestion(request: EvalRequest, prepared: PreparedEval) -> str | None:
    """The built-in adapter a served policy's protocol needs on this benchmark, where none is given
    (a vla-eval LIBERO server reads vla-eval's LIBERO layout, not seq's observation)."""
    if request.adapter is not None or request.policy_url is None:
        return None
    adapter = SUGGESTED_ADAPTERS.get((prepared.benchmark.name, request.policy_protocol))
    if adapter is None:
        return None
    return (
        f"a {request.policy_protocol} server written for {prepared.benchmark.name} reads "
        f"{request.policy_protocol}'s observation layout, not seq's: add --adapter {adapter}"
    )


def prepare_eval(request: EvalRequest, store: Store) -> PreparedEval:
    """Resolve versions and parameters, check compatibility and plan the work items."""
    check_threshold(request.threshold)  # refused before anything is stored: it decides every verdict
    if (request.policy is None and not request.arms and request.policy_url is None) or (
        request.benchmark is None
    ):
        raise SeqInputError("seq.eval.run needs a policy and a benchmark= (or resume=EVAL_ID).")
    request.check()
    asked = build_arms(
        request.policy,
        request.params,
        vs=request.vs,
        vs_params=request.vs_params,
        sweep=request.sweep,
        arms=request.arms,
    )
    benchmark_row = resolve("benchmark", request.benchmark, store)
    check_envs(request.envs)
    check_envs_per_worker(request, asked)
    spec = spec_of(load_version(benchmark_row))
    check_gpu(spec.name, spec.declared.get("gpu"), request.allow_cpu)  # refused before it is stored
    in_image = bool(spec.declared.get("image"))  # the benchmark's image installs what it needs
    if not in_image:
        check_installed("benchmark", benchmark_row.name, benchmark_row.ref, "this Python environment")
    adapter_row = resolve_adapter(request.adapter, store) if request.adapter is not None else None
    adapter_declared = adapter_spec(adapter_row) if adapter_row is not None else None
    arms: list[ArmManifest] = []
    policies: list[type | None] = []
    if request.policy_url is not None and request.serve:
        raise SeqInputError("--serve starts a server for the policy, --policy-url uses one: give one.")
    _check_image_encoding(request)
    if request.policy_name is not None and request.policy_url is None:
        raise SeqInputError("--policy-name names the server at --policy-url; give --policy-url too.")
    for index, arm in enumerate(asked):
        remote = request.policy_url if index == 0 else None
        server = None
        if remote is not None:
            from seq.serving.remote import register_remote

            served = register_remote(remote, request.policy_protocol, store, request.policy_name)
            policy_row, declared, server = served.row, served.parameters, served.server
            policy_cls = None
            asked_for = arm.policy.partition("@")[0] if isinstance(arm.policy, str) else None
            if asked_for and request.policy_name is None and asked_for != policy_row.name:
                raise SeqInputError(
                    f"POLICY {arm.policy}: the server at {remote} serves {policy_row.name}, not it; "
                    "drop POLICY, or record the server under a name of yours with --policy-name."
                )
        else:
            policy_row = resolve("policy", arm.policy, store)
            if request.serve or not in_image:  # served from this process, or run in its workers
                check_installed("policy", policy_row.name, policy_row.ref, "this Python environment")
            policy_cls = type(arm.policy) if isinstance(arm.policy, Policy) else load_version(policy_row)
            declared = policy_spec_of(policy_cls).parameters
            check_policy_declarations(policy_spec_of(policy_cls), request.allow_cpu)
        policy_asks = _asked_by_policy(policy_cls, spec.setup_parameters, arm.params)
        try:
            values = _resolve_params(declared, benchmark_row, {**policy_asks, **arm.params}, adapter_declared)
        except SeqInputError as error:  # name the flag that set the value: --param, --sweep, --vs-param
            key = next((k for k in arm.params if str(error).startswith(f"--param {k}:")), None)
            if key is None or arm.flag(key) == "--param":
                raise
            raise SeqInputError(str(error).replace("--param", arm.flag(key), 1)) from None
        policies.append(policy_cls)
        arms.append(
            ArmManifest(
                in_memory=remember_instance(arm.policy) if isinstance(arm.policy, Policy) else None,
                name=arm.name or "",
                policy=policy_row.label,
                policy_name=policy_row.name,
                policy_version=policy_row.version,
                policy_sha256=policy_row.sha256,
                params={k: str(v) for k, v in arm.params.items()},
                parameters=values,
                asked={k: str(v) for k, v in policy_asks.items()},
                policy_url=remote,
                protocol=request.policy_protocol if remote else PolicyProtocol.SEQ,
                server=server,
                image_encoding=request.image_encoding,
            )
        )
    items = plan(
        spec,
        suites=request.suites,
        tasks=request.tasks,
        seeds=request.seeds,
        max_steps=request.max_steps,
        trials=request.planned_trials,
        timeout_s=request.timeout_s,
        arms=[arm.name for arm in arms] if len(arms) > 1 or arms[0].name else (),
    )
    arms = _check_compatibility(arms, policies, benchmark_row, adapter_row, items)
    check_envs_per_worker(request, asked, policies)
    # no more workers than episodes: the dispatcher starts no idle ones, and the plan says so
    workers = min(request.envs or spec.declared.get("cpu") or default_envs(), max(len(items), 1))
    workers = capped_workers(workers, request.engine, request.envs)  # no more than the machine holds
    side_by_side = _side_by_side(request, arms, spec, items, workers)
    first = store.version("policy", arms[0].policy_name, arms[0].policy_version)
    assert first is not None
    sequential = None
    if request.sequential:
        sequential = SequentialOptions(request.alpha, request.looks, request.metric)
        check_sequential(sequential, len(arms))
    serve = None
    if request.serve:
        # the batches a served model takes by default: one per episode asked for (not the auto
        # count, which shares round trips and may be more than a model's memory holds at once)
        batch = request.max_batch_size or workers * (request.envs_per_worker or 1)
        serve = ServeOptions(batch, request.max_wait_ms)
    eval_id = request.eval_id or "ev-" + uuid.uuid4().hex[:10]
    observers = _observer_specs(spec, items, request, artifact_folder(store.path.parent, eval_id))
    arguments = EvalArguments(
        arms=[ArmArguments(arm.name, arm.policy, arm.params) for arm in arms],
        benchmark=benchmark_row.label,
        envs=request.envs,
        envs_per_worker=side_by_side.count,
        envs_per_worker_chosen=side_by_side.chosen,
        suites=list(request.suites or [spec.default_suite]),
        tasks=list(request.tasks or []) or None,
        seeds=None if request.seeds is None else list(request.seeds),
        max_steps=request.max_steps,
        trials=request.planned_trials,
        threshold=request.threshold,
        record=request.record,
        trajectories=request.trajectories,
        observers=observers,
        sequential=sequential,
        serve=serve,
        adapter=adapter_row.label if adapter_row is not None else None,
        allow_cpu=request.allow_cpu,
    )
    manifest = Manifest(
        seq=SeqBuild(__version__, git_sha()),
        benchmark=Pinned(benchmark_row.name, benchmark_row.version, benchmark_row.sha256),
        policy=Pinned(first.name, first.version, first.sha256),
        adapter=arms[0].adapter,
        arms=arms,
        seeds=sorted({item.condition.seed for item in items}),
        parameters=arms[0].parameters,
        default_max_steps=spec.max_steps,
        declared=spec.describe()["declared"],
    )
    return PreparedEval(eval_id, first, benchmark_row, arguments, manifest, items, workers, side_by_side)


def _check_image_encoding(request: EvalRequest) -> None:
    """Images are encoded only on their way to a served policy, as its protocol allows."""
    encoding = request.image_encoding
    if encoding not in tuple(ImageEncoding):
        raise SeqInputError(f"--image-encoding {encoding!r}: expected raw, png or jpeg.")
    if encoding == ImageEncoding.RAW:
        return
    served = request.policy_url is not None
    protocol = PolicyProtocol(request.policy_protocol) if served else PolicyProtocol.SEQ
    if request.policy_url is None and not request.serve:
        raise SeqInputError(
            f"--image-encoding {encoding} is for a served policy: add --serve or --policy-url."
        )
    taken = IMAGE_ENCODINGS[protocol]
    if encoding not in taken:
        allowed = " or ".join(taken)
        raise SeqInputError(f"--image-encoding {encoding}: a {protocol} server is sent images {allowed}.")


def _check_compatibility(
    arms: list[ArmManifest],
    policies: list[type | None],
    benchmark_row: VersionRow,
    adapter_row: VersionRow | None,
    items: list,
) -> list[ArmManifest]:
    """Before anything is stored: refuse an arm whose policy cannot take the benchmark's observation
    (through the adapter, whose lossless labels are checked again on it), naming the keys; returns
    the arms with their adapter version and lossy transforms (its parameters may change them) and
    what their policy was checked to take."""
    benchmark_cls = load_version(benchmark_row)
    conditions = list({item.condition.key: item.condition for item in items}.values())
    declared = benchmark_row.declared.get("declared", {})
    isolated = any(declared.get(key) for key in ("image", "assets", "secrets"))
    checked = []
    for arm, policy_cls in zip(arms, policies, strict=True):
        weights_for = getattr(policy_cls, "weights_for", None)
        if weights_for is not None:  # the weights its parameters name, read and pinned by content
            arm = replace(arm, weights=weights_for(arm.parameters["policy"]))
        adapter = None
        if adapter_row is not None:
            adapter = load_adapter(adapter_row.ref, arm.parameters["adapter"])
            arm = replace(
                arm,
                adapter=AdapterPin(
                    adapter_row.name,
                    adapter_row.version,
                    adapter_row.sha256,
                    adapter_row.label,
                    describe_transforms(adapter)["lossy"],
                ),
            )
        seen = check_compatibility(
            benchmark_cls,
            benchmark_row.label,
            arm.parameters["benchmark"],
            conditions,
            policy_cls,
            arm.policy,
            adapter,
            adapter_row.label if adapter_row is not None else None,
            sampler=partial(
                sample_in_isolation,
                benchmark_row.label,
                benchmark_row.ref,
                declared,
                arm.parameters["benchmark"],
                conditions,
            )
            if isolated
            else None,
            policy_parameters=arm.parameters["policy"],
        )
        if seen is not None:
            arm = replace(arm, observation={k: v for k, v in seen.to_manifest().items() if k != "adapter"})
        checked.append(arm)
    return checked


def _observer_specs(spec: Any, items: list, request: EvalRequest, directory: Any) -> list[dict[str, Any]]:
    """The recordings and trajectories this eval writes (see `seq.capture.observers`)."""
    wanted = request.trajectories or request.traces or request.record not in (None, "none")
    if wanted or spec.declared.get("render"):
        from seq.capture.observers import observer_specs

        return observer_specs(spec, items, request.record, request.trajectories, directory, request.traces)
    return []
