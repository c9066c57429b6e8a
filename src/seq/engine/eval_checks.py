"""Every refusal of an eval before it is stored (the check stage of `seq.engine.prepare`), in
groups by what each reads, each group run as soon as what it reads is known:

- `check_request`: the request alone, before the record is read or a server reached;
- `check_versions`: the resolved benchmark and policies, before their weights are read or the
  benchmark's conditions listed;
- `check_observations`: each arm's policy against the benchmark's observation on the planned
  conditions (the costly one: it resets the benchmark);
- `check_runnable`: what only running needs (the benchmark's image built, its volumes and secrets
  there), so a dry run skips it.

A new check goes in the group of what it reads; its code, where longer than a few lines, in a
module of its own (`policy_requirements`, `observation_fit`, `worker_isolation`, `sequential`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from seq.authoring.policy import Policy, policy_spec_of
from seq.engine.arms import Arm
from seq.engine.capacity import default_envs
from seq.engine.observation_fit import check_compatibility
from seq.engine.policy_requirements import check_policy_declarations
from seq.engine.request import EvalRequest
from seq.engine.resolution import ResolvedEval
from seq.engine.sample import sample_in_isolation
from seq.engine.sequential import check_sequential
from seq.engine.worker_isolation import check_gpu, check_isolation
from seq.errors import SeqInputError
from seq.record.arguments import SequentialOptions
from seq.record.states import IMAGE_ENCODINGS, ImageEncoding, PolicyProtocol
from seq.record.store import VersionRow, WorkItem
from seq.registry.builtins import check_installed
from seq.stats.paired import check_threshold


def check_request(request: EvalRequest) -> None:
    """What the request alone can refuse."""
    check_threshold(request.threshold)  # it decides every verdict
    if (request.policy is None and not request.arms and request.policy_url is None) or (
        request.benchmark is None
    ):
        raise SeqInputError("seq.eval.run needs a policy and a benchmark= (or resume=EVAL_ID).")
    request.check()
    check_envs(request.envs)
    check_envs_per_worker(request)
    if request.policy_url is not None and request.serve:
        raise SeqInputError("--serve starts a server for the policy, --policy-url uses one: give one.")
    _check_image_encoding(request)
    if request.policy_name is not None and request.policy_url is None:
        raise SeqInputError("--policy-name names the server at --policy-url; give --policy-url too.")


def check_envs(envs: int | None) -> int:
    """`--envs`, or one worker per core where it is not given."""
    if envs is None:
        return default_envs()
    if isinstance(envs, bool) or not isinstance(envs, int) or envs < 1:
        raise SeqInputError(f"--envs must be a positive integer, got {envs!r}.")
    return envs


def check_envs_per_worker(request: EvalRequest) -> None:
    """Several episodes per worker ask for their acts at once: refused where nothing would batch
    them (an openpi or vla-eval server, a policy object that runs its episodes in this process; an
    inline policy that takes one observation at a time is refused by `check_versions`)."""
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
    given = [request.policy, request.vs, *(a.policy if isinstance(a, Arm) else a for a in request.arms or ())]
    if any(isinstance(policy, Policy) for policy in given):
        raise SeqInputError(
            f"envs_per_worker={count} runs on worker processes, but a policy object in this process "
            "runs its episodes here, one at a time: pass the policy's name or envs_per_worker=1."
        )


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


def check_versions(request: EvalRequest, resolved: ResolvedEval) -> None:
    """What the resolved benchmark and policies can refuse: a GPU the benchmark needs, a built-in's
    simulator not installed, a policy's own declarations, a served policy under another name, an
    inline policy asked for several episodes' acts at once, a sequential test of other than two."""
    spec, benchmark = resolved.spec, resolved.benchmark
    check_gpu(spec.name, spec.declared.get("gpu"), request.allow_cpu)
    in_image = bool(spec.declared.get("image"))  # the benchmark's image installs what it needs
    if not in_image:
        check_installed("benchmark", benchmark.name, benchmark.ref, "this Python environment")
    for arm in resolved.arms:
        if arm.policy_url is not None:
            asked_for = arm.arm.policy.partition("@")[0] if isinstance(arm.arm.policy, str) else None
            if asked_for and request.policy_name is None and asked_for != arm.policy.name:
                raise SeqInputError(
                    f"POLICY {arm.arm.policy}: the server at {arm.policy_url} serves "
                    f"{arm.policy.name}, not it; drop POLICY, or record the server under a name of "
                    "yours with --policy-name."
                )
            continue
        if request.serve or not in_image:  # served from this process, or run in its workers
            check_installed("policy", arm.policy.name, arm.policy.ref, "this Python environment")
        assert arm.policy_cls is not None  # only a served policy has none
        spec_of_policy = policy_spec_of(arm.policy_cls)
        check_policy_declarations(spec_of_policy, request.allow_cpu)
        count = request.envs_per_worker
        if count is not None and count > 1 and not request.serve and not spec_of_policy.batched:
            raise SeqInputError(
                f"--envs-per-worker {count} asks the policy for several episodes' acts at once, but "
                f"{spec_of_policy.name} takes one observation at a time: serve it (--serve) or "
                "declare @seq.infer(batched=True)."
            )
    if request.sequential:
        options = SequentialOptions(request.alpha, request.looks, request.metric)
        check_sequential(options, len(resolved.arms))


def check_observations(resolved: ResolvedEval, items: list[WorkItem]) -> list[dict[str, Any] | None]:
    """Refuse an arm whose policy cannot take the benchmark's observation (through the adapter,
    whose lossless labels are checked again on it), naming the keys; returns, arm by arm, what its
    policy was checked to take (None: nothing to check)."""
    benchmark: VersionRow = resolved.benchmark
    conditions = list({item.condition.key: item.condition for item in items}.values())
    declared = benchmark.declared.get("declared", {})
    isolated = any(declared.get(key) for key in ("image", "assets", "secrets"))
    seen_by_arm: list[dict[str, Any] | None] = []
    for arm in resolved.arms:
        setup = arm.values["benchmark"]
        seen = check_compatibility(
            resolved.benchmark_cls,
            benchmark.label,
            setup,
            conditions,
            arm.policy_cls,
            arm.policy.label,
            arm.adapter,
            resolved.adapter.label if resolved.adapter is not None else None,
            sampler=partial(sample_in_isolation, benchmark.label, benchmark.ref, declared, setup, conditions)
            if isolated
            else None,
            policy_parameters=arm.values["policy"],
        )
        seen_by_arm.append(
            None if seen is None else {k: v for k, v in seen.to_manifest().items() if k != "adapter"}
        )
    return seen_by_arm


def check_runnable(benchmark: VersionRow) -> None:
    """The benchmark's image builds (once: it is cached), its volumes and secrets exist."""
    check_isolation(benchmark.declared.get("declared", {}), benchmark.label)
