"""Conditions: the task × seed × variant combinations a benchmark is evaluated on."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from seq.errors import SeqInputError

# What a record, a wire message and a simulator's seed can hold: larger is a typo, not a plan.
MOST_STEPS = 2**31 - 1
SEEDS = range(0, 2**32)  # numpy's and gymnasium's seed range


def check_max_steps(value: int | None, where: str) -> None:
    """Refuse a step limit that is not a positive integer (below 2**31)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MOST_STEPS:
        raise SeqInputError(
            f"{where}: max_steps must be a positive integer below 2**31, got {value!r}."
        )


def check_timeout(value: float | None, where: str) -> None:
    """Refuse a time limit that is not a positive, finite number of seconds (NaN would turn the
    watchdog off)."""
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise SeqInputError(f"{where}: timeout_s must be a positive number of seconds, got {value!r}.")


def check_seed(value: int, where: str) -> None:
    """Refuse a seed a simulator cannot take (0 to 2**32 - 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in SEEDS:
        raise SeqInputError(f"{where}: a seed is an integer from 0 to 2**32 - 1, got {value!r}.")


@dataclass(frozen=True)
class Condition:
    """One starting condition of an episode: a task, a seed and optionally a variation.

    `max_steps` and `timeout_s` override the benchmark's limits for this condition only;
    `suite` groups conditions in the report. `variant` in `@seq.reset` is this object.
    """

    task: str
    seed: int = 0
    variation: str | None = None
    max_steps: int | None = None
    timeout_s: float | None = None
    suite: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.seed, numbers.Integral) and not isinstance(self.seed, (bool, int)):
            object.__setattr__(self, "seed", int(self.seed))  # numpy integers, as from np.arange
        if not isinstance(self.task, str) or not self.task:
            raise SeqInputError(f"seq.Condition: task must be a non-empty string, got {self.task!r}.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SeqInputError(
                f"seq.Condition(task={self.task!r}): seed must be an integer, got {self.seed!r}."
            )
        check_max_steps(self.max_steps, f"seq.Condition(task={self.task!r})")
        check_timeout(self.timeout_s, f"seq.Condition(task={self.task!r})")

    def __hash__(self) -> int:
        return hash((self.key, self.max_steps, self.timeout_s, self.suite))

    def __getattr__(self, name: str) -> Any:
        # variant.<key> reads keys passed through `variants=` dicts.
        extra = self.__dict__.get("extra", {})
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    @property
    def key(self) -> str:
        """A stable, readable identity of the condition (without limits)."""
        parts = [self.task]
        if self.variation is not None:
            parts.append(f"variation={self.variation}")
        for name in sorted(self.extra):
            parts.append(f"{name}={self.extra[name]}")
        parts.append(f"seed={self.seed}")
        return "|".join(parts)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra"] = dict(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Condition:
        return cls(**{**data, "extra": dict(data.get("extra") or {})})


def reseeded(conditions: Sequence[Condition], seeds: Sequence[int]) -> list[Condition]:
    """Each distinct task, variation and extra of `conditions` once per seed of `seeds`, seeds the
    benchmark does not list included: what `--seeds` makes of a benchmark's conditions."""
    templates: dict[tuple, Condition] = {}
    for condition in conditions:
        templates.setdefault(
            (condition.task, condition.variation, tuple(sorted(condition.extra.items()))), condition
        )
    return [
        Condition(**{**template.to_dict(), "seed": seed}) for template in templates.values() for seed in seeds
    ]


def _as_variant(value: Any) -> tuple[str | None, dict[str, Any]]:
    if value is None:
        return None, {}
    if isinstance(value, Mapping):
        extra = dict(value)
        name = extra.pop("variation", None) or extra.pop("name", None)
        return (None if name is None else str(name)), extra
    return str(value), {}


def conditions(
    tasks: Iterable[str],
    seeds: Iterable[int] = (0,),
    variants: Iterable[Any] | None = None,
    max_steps: int | None = None,
    timeout_s: float | None = None,
    suite_of: Mapping[str, str] | None = None,
) -> list[Condition]:
    """Every combination of tasks × variants × seeds, as a list of `Condition`.

    A variant is a name (`"lighting=dim"`) or a dict of keys readable as `variant.<key>`;
    `suite_of` maps a task to its suite for the report's per-suite groups.

    >>> seq.conditions(tasks=["reach-v3", "push-v3"], seeds=range(3), suite_of={"reach-v3": "easy"})
    """
    tasks = list(tasks)
    if not tasks:
        raise SeqInputError("seq.conditions: tasks is empty; give at least one task name.")
    suite_of = dict(suite_of or {})
    unknown = sorted(set(suite_of) - set(tasks))
    if unknown:
        raise SeqInputError(
            f"seq.conditions: suite_of names tasks that are not in tasks: {', '.join(unknown)}."
        )
    variant_list = list(variants) if variants is not None else [None]
    out = []
    for task, variant, seed in itertools.product(tasks, variant_list, list(seeds)):
        variation, extra = _as_variant(variant)
        out.append(
            Condition(
                task=task,
                seed=seed,
                variation=variation,
                max_steps=max_steps,
                timeout_s=timeout_s,
                suite=suite_of.get(task),
                extra=extra,
            )
        )
    return out
