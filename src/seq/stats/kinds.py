"""A metric's kind: a *rate* (each episode 0 or 1; Wilson, McNemar, Tango) or a *mean* (any number;
the BCa bootstrap). The kind belongs to the metric for a whole eval, so every group, arm and
comparison of one report treats a metric the same way, whatever values a group happens to hold.

Where a kind comes from, first that applies:
1. declared by the benchmark: `@seq.benchmark(metrics={"grasped": "rate", "progress": "mean"})`;
2. the metric's name: `success` and `is_success` are rates; `steps`, `return` and `duration_s`
   means;
3. the eval's values: a rate when every value the whole eval recorded is 0 or 1, else a mean.

A metric held to be a rate (declared, or by name) with a value other than 0 or 1 anywhere in the
eval is a mean for that eval, and the report says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from seq.errors import SeqInputError

RATE = "rate"
MEAN = "mean"
KINDS = (RATE, MEAN)
# seq's own names: `plans` and `nan_actions` are counts an episode records (all 0 in one eval is
# still a count, not a rate with a Wilson interval)
KINDS_BY_NAME = {
    "success": RATE,
    "is_success": RATE,
    "steps": MEAN,
    "return": MEAN,
    "duration_s": MEAN,
    "plans": MEAN,
    "nan_actions": MEAN,
}


@dataclass(frozen=True)
class MetricKind:
    """A metric's kind for one eval, where it came from (`declared`, `name`, `values`), and a note
    where the values overruled a rate."""

    kind: str
    source: str
    note: str | None = None


def check_metric_kinds(declared: Any, where: str) -> dict[str, str]:
    """A benchmark's `metrics=` declaration as {name: kind}, or one sentence saying what is wrong."""
    if not isinstance(declared, Mapping):
        raise SeqInputError(f"{where}: metrics= must map metric names to 'rate' or 'mean', got {declared!r}.")
    kinds = {}
    for name, kind in declared.items():
        if not isinstance(name, str) or kind not in KINDS:
            raise SeqInputError(
                f"{where}: metrics= maps {name!r} to {kind!r}; expected a name mapped to 'rate' "
                "(each episode 0 or 1) or 'mean' (any number)."
            )
        kinds[name] = kind
    return kinds


def _all_binary(values: Iterable[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def metric_kinds(
    values: Mapping[str, Iterable[float]], declared: Mapping[str, str] | None = None
) -> dict[str, MetricKind]:
    """Each metric's kind for an eval, from every value it recorded (`values`: name → values)."""
    declared = declared or {}
    kinds = {}
    for name, seen in values.items():
        seen = list(seen)
        if name in declared and declared[name] in KINDS:
            kind, source = declared[name], "declared"
        elif name in KINDS_BY_NAME:
            kind, source = KINDS_BY_NAME[name], "name"
        else:
            kind, source = (RATE if seen and _all_binary(seen) else MEAN), "values"
        if kind == RATE and not _all_binary(seen):
            why = "declared a rate" if source == "declared" else "a rate by its name"
            kinds[name] = MetricKind(MEAN, source, f"{why}, but not every value is 0 or 1")
        else:
            kinds[name] = MetricKind(kind, source)
    return kinds
