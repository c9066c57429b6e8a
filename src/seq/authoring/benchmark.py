"""`@seq.benchmark`: a benchmark is a class with hooks; `seq` owns the episode loop."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq.authoring.conditions import Condition, check_max_steps
from seq.authoring.declarations import Image, Secret, Volume, describe
from seq.authoring.hooks import collect_hooks
from seq.authoring.params import Parameter, declared_parameters
from seq.authoring.resources import check_cpu, check_gpu, parse_memory
from seq.errors import SeqInputError
from seq.stats.kinds import check_metric_kinds

SPEC_ATTRIBUTE = "__seq_spec__"
DEFAULT_MAX_STEPS = 500


@dataclass(frozen=True)
class Step:
    """What `@seq.check` returns after each sim step: whether the episode is done, and its metrics."""

    done: bool = False
    metrics: Mapping[str, Any] = field(default_factory=dict)


class Benchmark:
    """Base class of benchmarks. Subclass it, decorate it with `@seq.benchmark`, implement hooks.

    `instruction(variant)` gives the text passed to the policy's `infer(instruction=...)`;
    by default, the condition's task name.
    """

    def instruction(self, variant: Condition) -> str:
        return variant.task


@dataclass(frozen=True)
class BenchmarkSpec:
    """Everything `@seq.benchmark` declared, validated."""

    name: str
    suites: dict[str, list[Condition]]
    max_steps: int
    hooks: dict[str, str]
    setup_parameters: dict[str, Parameter]
    declared: dict[str, Any]
    batched: bool = False  # a worker's episodes share one instance, their envs stepping together

    @property
    def default_suite(self) -> str:
        return next(iter(self.suites))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "max_steps": self.max_steps,
            "suites": {name: len(conds) for name, conds in self.suites.items()},
            "setup_parameters": {p.name: p.describe() for p in self.setup_parameters.values()},
            "declared": self.declared,
            **({"batched": True} if self.batched else {}),
        }


def _kebab(name: str) -> str:
    out = []
    for i, char in enumerate(name):
        if char.isupper() and i and not name[i - 1].isupper():
            out.append("-")
        out.append(char.lower())
    return "".join(out)


def _suites(conditions: Any, where: str) -> dict[str, list[Condition]]:
    if conditions is None:
        raise SeqInputError(f"{where}: conditions= is required (use seq.conditions(tasks=..., seeds=...)).")
    if isinstance(conditions, Mapping):
        suites = {}
        for suite, conds in conditions.items():
            suites[str(suite)] = [
                c if c.suite else _with_suite(c, str(suite)) for c in _as_list(conds, where)
            ]
        if not suites:
            raise SeqInputError(f"{where}: conditions= is an empty mapping; name at least one suite.")
        return suites
    return {"default": _as_list(conditions, where)}


def _with_suite(condition: Condition, suite: str) -> Condition:
    return Condition(**{**condition.to_dict(), "suite": suite})


def _as_list(conditions: Any, where: str) -> list[Condition]:
    if isinstance(conditions, Condition):
        conditions = [conditions]
    if not isinstance(conditions, Sequence) or not conditions:
        raise SeqInputError(f"{where}: conditions= must be a non-empty list of seq.Condition.")
    for item in conditions:
        if not isinstance(item, Condition):
            raise SeqInputError(f"{where}: conditions= holds {item!r}, expected seq.Condition.")
    return list(conditions)


def benchmark(
    name: str | None = None,
    *,
    conditions: Sequence[Condition] | Mapping[str, Sequence[Condition]] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    render: Any = None,
    image: Any = None,
    gpu: str | None = None,
    cpu: int | None = None,
    memory: int | str | None = None,
    env_memory: int | str | None = None,
    assets: Any = None,
    secrets: Sequence[Any] | None = None,
    metrics: Mapping[str, str] | None = None,
    batched: bool = False,
    **unknown: Any,
) -> Callable[[type], type]:
    """Declare a benchmark class (`@seq.benchmark(name=...)`, or bare: named after the class).

    Args:
        name: the name evals use (`--benchmark NAME`).
        conditions: a list, or a dict of named suites (the first is the default, `--suite` picks
            others; a condition that names its own suite keeps it for the report's groups).
        max_steps: the cost backstop when `check` never says done.
        render: records videos (`seq.Record`).
        image: a `seq.Image`, built once as a virtual environment the workers run in.
        gpu: a card's name, or `"cpu"` (the default).
        cpu: workers, by default one per core.
        memory: for all workers together: GiB, or a text like `"512MiB"`.
        env_memory: about what one env takes, so that a served eval runs no more envs side by
            side than memory holds (`seq.engine.side_by_side`).
        assets: a `seq.Volume`, read-only at `/assets`.
        secrets: `seq.Secret`s, environment variables of the benchmark's processes only.
        metrics: a metric's kind for the report, `{"grasped": "rate", "progress": "mean"}`: a rate
            (each episode 0 or 1) gets Wilson intervals and McNemar's test, a mean the bootstrap;
            undeclared, `success` is a rate, `steps`, `return` and `duration_s` means, and any
            other metric a rate only where every value of the eval is 0 or 1 (`seq.stats.kinds`).
        batched: the episodes a worker runs side by side (`--envs-per-worker N`) share one
            instance, whose envs step together, N worlds in one physics step (`seq.engine.batch`:
            a ported MuJoCo Warp benchmark's).

    Returns:
        The class decorator; the class it returns is the class given, declared.

    Raises:
        SeqInputError: an unknown argument, or a declaration that cannot hold.
    """
    if isinstance(name, type):  # used bare, as @seq.benchmark
        return benchmark()(name)
    if "default_adapter" in unknown:
        raise SeqInputError(
            "@seq.benchmark: default_adapter= is refused; an eval names its adapter with --adapter."
        )
    if unknown:
        raise SeqInputError(f"@seq.benchmark: unknown argument(s) {', '.join(sorted(unknown))}.")

    def decorate(cls: type) -> type:
        where = f"@seq.benchmark on {cls.__name__}"
        if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
            raise SeqInputError(f"{where}: the class must subclass seq.Benchmark.")
        check_max_steps(max_steps, where)
        resources = dict(
            cpu=cpu if cpu is None else check_cpu(cpu, where),
            memory=memory if memory is None else parse_memory(memory, where),
            env_memory=env_memory if env_memory is None else parse_memory(env_memory, where, "env_memory", 1),
            gpu=gpu if gpu is None else check_gpu(gpu, where),
        )
        secret_list = [secrets] if isinstance(secrets, Secret) else secrets
        _check_declarations(where, image, assets, secret_list)
        metric_kinds = check_metric_kinds(metrics, where) if metrics is not None else None
        hooks = collect_hooks(cls)
        if "reset" not in hooks:
            raise SeqInputError(f"{where}: the class has no @seq.reset hook; add one that returns an env.")
        if "check" not in hooks:
            raise SeqInputError(f"{where}: the class has no @seq.check hook; add one that returns seq.Step.")
        for hook in ("infer", "load", "plan"):
            if hook in hooks:
                raise SeqInputError(f"{where}: @seq.{hook} belongs on a policy, not a benchmark.")
        setup_fn = getattr(cls, hooks["setup"]) if "setup" in hooks else None
        reset_params = list(inspect.signature(getattr(cls, hooks["reset"])).parameters)
        if reset_params[:3] != ["self", "seed", "variant"]:
            raise SeqInputError(f"{where}: @seq.reset must be `def {hooks['reset']}(self, seed, variant)`.")
        declared = {
            key: describe(value)
            for key, value in dict(
                render=render,
                image=image,
                assets=assets,
                secrets=list(secret_list) if secret_list else None,
                **resources,
            ).items()
            if value is not None
        }
        if metric_kinds:
            declared["metrics"] = metric_kinds
        spec = BenchmarkSpec(
            name=name or _kebab(cls.__name__),
            suites=_suites(conditions, where),
            max_steps=max_steps,
            hooks=hooks,
            setup_parameters=declared_parameters(setup_fn, f"{where}, @seq.setup"),
            declared=declared,
            batched=bool(batched),
        )
        setattr(cls, SPEC_ATTRIBUTE, spec)
        return cls

    return decorate


def _check_declarations(where: str, image: Any, assets: Any, secrets: Any) -> None:
    if image is not None and not isinstance(image, Image):
        raise SeqInputError(f"{where}: image= must be a seq.Image, got {image!r}.")
    if assets is not None and not isinstance(assets, Volume):
        raise SeqInputError(f"{where}: assets= must be seq.Volume.from_name(NAME), got {assets!r}.")
    if secrets is not None:
        if not isinstance(secrets, Sequence) or not all(isinstance(s, Secret) for s in secrets):
            raise SeqInputError(
                f"{where}: secrets= must be a list of seq.Secret.from_name(NAME), got {secrets!r}."
            )


def spec_of(cls: type) -> BenchmarkSpec:
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    if not isinstance(spec, BenchmarkSpec):
        raise SeqInputError(f"{cls.__name__} is not decorated with @seq.benchmark.")
    return spec
