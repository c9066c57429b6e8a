"""`@seq.policy`: a policy is a class with `@seq.infer`, and optionally `@seq.load` (once per
process) and `@seq.begin` (as each episode starts)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from seq.authoring.begin import EpisodeStart, begin_keywords, call_begin
from seq.authoring.conventions import parse_conventions
from seq.authoring.hooks import BATCHED_ATTRIBUTE, collect_hooks
from seq.authoring.params import Parameter, declared_parameters
from seq.errors import SeqInputError

SPEC_ATTRIBUTE = "__seq_spec__"


class Policy:
    """Base class of policies. `action_space` is set to the env's action space before each
    episode when the policy runs inline, so a generic policy (such as `random`) can use it."""

    action_space: Any = None


@dataclass(frozen=True)
class PolicySpec:
    name: str
    hooks: dict[str, str]
    parameters: dict[str, Parameter]
    batched: bool = False  # `@seq.infer(batched=True)`: infer takes lists and returns one output each
    begin_fields: tuple[str, ...] | None = ()  # what `@seq.begin` takes (None: every field)
    conventions: dict[str, Any] = field(default_factory=dict)  # see `seq.authoring.conventions`

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parameters": {p.name: {"type": p.type, "default": p.default} for p in self.parameters.values()},
            "batched": self.batched,
        }

    def begin(self, instance: Any, episode: EpisodeStart | None) -> None:
        """Tell `instance` an episode starts (its `@seq.begin`, where it has one)."""
        if "begin" in self.hooks:
            call_begin(instance, self.hooks["begin"], self.begin_fields, episode)


def policy(name: str | None = None) -> Callable[[type], type]:
    """Declare a policy class. `infer` returns one action (1-D), an action chunk (`[H, D]`), or a
    dict whose `actions` is either; keyword parameters it declares can be set per eval.
    """

    if isinstance(name, type):  # used bare, as @seq.policy
        return policy()(name)  # type: ignore[return-value]

    def decorate(cls: type) -> type:
        from seq.authoring.benchmark import _kebab

        where = f"@seq.policy on {cls.__name__}"
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
        spec = PolicySpec(
            name=name or _kebab(cls.__name__),
            hooks=hooks,
            parameters=declared_parameters(infer_fn, f"{where}, @seq.infer"),
            batched=bool(getattr(infer_fn, BATCHED_ATTRIBUTE, False)),
            begin_fields=begin_keywords(getattr(cls, hooks["begin"]), where) if "begin" in hooks else (),
            conventions=parse_conventions(getattr(cls, "conventions", None), where),
        )
        setattr(cls, SPEC_ATTRIBUTE, spec)
        return cls

    return decorate


def policy_spec_of(cls: type) -> PolicySpec:
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    if not isinstance(spec, PolicySpec):
        raise SeqInputError(f"{cls.__name__} is not decorated with @seq.policy.")
    return spec
