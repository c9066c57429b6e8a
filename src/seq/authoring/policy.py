"""`@seq.policy`: a policy is a class with `@seq.infer`, and optionally `@seq.load` (once per
process), `@seq.begin` (as each episode starts) and `@seq.plan` (a composite's planner, per
environment, off the per-step path)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from seq.authoring.begin import EpisodeStart, begin_keywords, call_begin
from seq.authoring.conventions import parse_conventions
from seq.authoring.hooks import BATCHED_ATTRIBUTE, collect_hooks
from seq.authoring.params import Parameter, declared_parameters
from seq.authoring.policy_declarations import plan_every_s, plan_keywords, policy_declared
from seq.errors import SeqInputError

SPEC_ATTRIBUTE = "__seq_spec__"


class Policy:
    """Base class of policies. `action_space` is set to the env's action space before each
    episode when the policy runs inline, so a generic policy (such as `random`) can use it."""

    action_space: Any = None
    chat: Any = None  # a `seq.Chat` for the models declared in `models=`, set before `@seq.load`


@dataclass(frozen=True)
class PolicySpec:
    name: str
    hooks: dict[str, str]
    parameters: dict[str, Parameter]
    batched: bool = False  # `@seq.infer(batched=True)`: infer takes lists and returns one output each
    begin_fields: tuple[str, ...] | None = ()  # what `@seq.begin` takes (None: every field)
    conventions: dict[str, Any] = field(default_factory=dict)  # see `seq.authoring.conventions`
    declared: dict[str, Any] = field(default_factory=dict)  # gpu, max_gpus, weights, models
    plan_every_s: float | None = None  # `@seq.plan(every_s=…)`: a composite policy's planner
    plan_keywords: tuple[str, ...] = ()  # what the planner takes besides obs

    def describe(self) -> dict[str, Any]:
        described = {
            "name": self.name,
            "parameters": {p.name: p.describe() for p in self.parameters.values()},
            "batched": self.batched,
        }
        if self.declared or self.plan_every_s is not None:
            plan = {"plan": {"every_s": self.plan_every_s}} if self.plan_every_s is not None else {}
            described["declared"] = {**self.declared, **plan}
        return described

    def begin(self, instance: Any, episode: EpisodeStart | None) -> None:
        """Tell `instance` an episode starts (its `@seq.begin`, where it has one)."""
        if "begin" in self.hooks:
            call_begin(instance, self.hooks["begin"], self.begin_fields, episode)


def policy(
    name: str | None = None,
    *,
    gpu: str | None = None,
    max_gpus: int | None = None,
    weights: Any = None,
    models: list[str] | None = None,
) -> Callable[[type], type]:
    """Declare a policy class (a `seq.Policy` subclass with an `@seq.infer` hook). `infer` returns
    one action (1-D), an action chunk (`[H, D]`), or a dict whose `actions` is either; keyword
    parameters it declares can be set per eval.

    Args:
        name: the name evals use (`seq eval run NAME`); bare `@seq.policy`: the class's name.
        gpu: the card it needs (`"H100"`, `"any"`); an eval refuses a machine without one unless
            `--allow-cpu`.
        max_gpus: the most cards it may use.
        weights: a `seq.Volume` of weights, mounted read-only and handed to `@seq.load` as
            `weights_dir`.
        models: the chat models it may call (`self.chat`, see `seq.Chat`), each configured in
            `SEQ_HOME/models.toml`.

    Returns:
        The class decorator; the class it returns is the class given, declared.

    Raises:
        SeqInputError: a class that is not a `seq.Policy` with `@seq.infer`, or a declaration that
            cannot hold.
    """

    if isinstance(name, type):  # used bare, as @seq.policy
        return policy()(name)

    def decorate(cls: type) -> type:
        from seq.authoring.benchmark import _kebab

        where = f"@seq.policy on {cls.__name__}"
        declared = policy_declared(where, gpu, max_gpus, weights, models)
        if not (isinstance(cls, type) and issubclass(cls, Policy)):
            raise SeqInputError(f"{where}: the class must subclass seq.Policy.")
        hooks = collect_hooks(cls)
        if "infer" not in hooks:
            raise SeqInputError(f"{where}: the class has no @seq.infer hook.")
        for hook in ("reset", "check", "setup", "score"):
            if hook in hooks:
                raise SeqInputError(f"{where}: @seq.{hook} belongs on a benchmark, not a policy.")
        infer_fn = getattr(cls, hooks["infer"])
        names = list(inspect.signature(infer_fn).parameters)
        if names[:2] != ["self", "obs"]:
            raise SeqInputError(
                f"{where}: @seq.infer must be `def {hooks['infer']}(self, obs, *, seed=None, ...)`."
            )
        plan_fn = getattr(cls, hooks["plan"]) if "plan" in hooks else None
        spec = PolicySpec(
            name=name or _kebab(cls.__name__),
            hooks=hooks,
            parameters=declared_parameters(infer_fn, f"{where}, @seq.infer"),
            batched=bool(getattr(infer_fn, BATCHED_ATTRIBUTE, False)),
            begin_fields=begin_keywords(getattr(cls, hooks["begin"]), where) if "begin" in hooks else (),
            conventions=parse_conventions(getattr(cls, "conventions", None), where),
            declared=declared,
            plan_every_s=plan_every_s(plan_fn) if plan_fn is not None else None,
            plan_keywords=plan_keywords(plan_fn, where) if plan_fn is not None else (),
        )
        setattr(cls, SPEC_ATTRIBUTE, spec)
        return cls

    return decorate


def policy_spec_of(cls: type) -> PolicySpec:
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    if not isinstance(spec, PolicySpec):
        raise SeqInputError(f"{cls.__name__} is not decorated with @seq.policy.")
    return spec
