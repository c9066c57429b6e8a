"""`@seq.policy`: a policy is a class with `@seq.load` and `@seq.infer`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parameters": {p.name: {"type": p.type, "default": p.default} for p in self.parameters.values()},
            "batched": self.batched,
        }


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
        )
        setattr(cls, SPEC_ATTRIBUTE, spec)
        return cls

    return decorate


def policy_spec_of(cls: type) -> PolicySpec:
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    if not isinstance(spec, PolicySpec):
        raise SeqInputError(f"{cls.__name__} is not decorated with @seq.policy.")
    return spec
