"""Hook decorators: they only mark a method; `@seq.benchmark` and `@seq.policy` collect the marks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from seq.errors import SeqInputError

F = TypeVar("F", bound=Callable[..., Any])
HOOK_ATTRIBUTE = "__seq_hook__"


def _mark(name: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        setattr(fn, HOOK_ATTRIBUTE, name)
        return fn

    mark.__name__ = name
    mark.__doc__ = f"Mark a method as the `{name}` hook."
    return mark


setup = _mark("setup")
setup.__doc__ = "Once per worker process, before any episode; may declare typed keyword parameters."
reset = _mark("reset")
reset.__doc__ = "`reset(self, seed, variant)` builds and returns a gym-style env for one condition."
check = _mark("check")
check.__doc__ = "`check(self, env)` runs after every `env.step` and returns `seq.Step(done=, metrics=)`."
score = _mark("score")
score.__doc__ = "`score(self, results)` computes a group's own aggregates (overall, each suite, each task)."
load = _mark("load")
load.__doc__ = "`load(self, weights_dir)` loads a policy's weights once per process."
begin = _mark("begin")
begin.__doc__ = (
    "`begin(self, *, task=None, suite=None, instruction=None, seed=None)` runs as each episode starts, "
    "inline or served, before its first infer: where a stateful policy resets (history, chunk buffer). "
    "It is called with the keywords it declares."
)
BATCHED_ATTRIBUTE = "__seq_batched__"
_mark_infer = _mark("infer")


def infer(fn: F | None = None, *, batched: bool = False) -> Any:
    """Mark the policy's inference method; used bare (`@seq.infer`) or as `@seq.infer(batched=True)`.

    `infer(self, obs, *, seed=None, instruction=None, **params)` returns an action or a chunk. A
    batched infer takes lists instead (`obs`, `seed` and `instruction` each one entry per request)
    and returns one output per entry, so a server can hand it many environments' requests at once.
    """

    if fn is not None and not callable(fn):
        raise TypeError("write @seq.infer or @seq.infer(batched=True).")

    def mark(target: F) -> F:
        setattr(target, BATCHED_ATTRIBUTE, bool(batched))
        return _mark_infer(target)

    return mark if fn is None else mark(fn)


PLAN_EVERY_ATTRIBUTE = "__seq_plan_every_s__"
_mark_plan = _mark("plan")


def plan(fn: F | None = None, *, every_s: float | None = None) -> Any:
    """Mark a composite policy's planner: `@seq.plan(every_s=2.0)`.

    `plan(self, obs, *, instruction=None, current=None)` is called for each environment on its
    own, about every `every_s` seconds, in a thread of its own (never on the per-step path), with
    that environment's latest observation; it is told the keywords it declares: `instruction` (the
    robot's own task) and `current` (the plan step in force, None before the first). It returns
    the next step as text, which `@seq.infer` then gets as `instruction`, or None to keep the
    current one.
    """

    if fn is not None or every_s is None:
        raise SeqInputError("@seq.plan needs every_s=: write @seq.plan(every_s=2.0).")
    if isinstance(every_s, bool) or not isinstance(every_s, int | float) or not 0 < every_s < float("inf"):
        raise SeqInputError(f"@seq.plan(every_s=...) must be a positive number of seconds, got {every_s!r}.")

    def mark(target: F) -> F:
        setattr(target, PLAN_EVERY_ATTRIBUTE, float(every_s))
        return _mark_plan(target)

    return mark


def collect_hooks(cls: type) -> dict[str, str]:
    """Map each hook name to the method name that carries it, walking the class's MRO."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            hook = getattr(value, HOOK_ATTRIBUTE, None)
            if hook is not None:
                found[hook] = attr
    return found
