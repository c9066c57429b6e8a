"""Metrics: item values averaged over independent seeds, then over items, with a 95% interval.

The unit of a metric is the item: an item's value is its mean over the algorithm's independent seeds
(a seed-invariant algorithm has one, broadcast copies are not counted again), and the interval is
over items, from `seq.stats` (Wilson for 0/1 values, BCa bootstrap otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from seq.seqbench.scoring import item_value
from seq.seqbench.selectors import matches
from seq.seqbench.specs import Where
from seq.stats import Interval, metric_interval

GROUP_KEYS = ("family", "condition", "variant")
REPORTED_METRICS = ("exact_match", "choice_accuracy", "target_log_probability")


class _RecordView:
    """Lets a prediction record be matched by a `where` clause like a task row."""

    __slots__ = ("record",)

    def __init__(self, record: dict) -> None:
        self.record = record

    def value(self, column: str) -> str:
        return str(self.record["item_id" if column == "id" else column])


def record_matches(record: dict, where: Where) -> bool:
    return matches(_RecordView(record), where)  # type: ignore[arg-type]


def item_values(
    records: Iterable[dict],
    stage: str,
    where: Where,
    metric: str,
    generates: bool,
    reference_bytes: int | None = None,
) -> dict[str, float]:
    """item id → the item's value averaged over the independent seeds (broadcast copies skipped)."""
    sums: dict[str, list[float]] = {}
    for record in records:
        if record["stage"] != stage or record["broadcast"] or not record_matches(record, where):
            continue
        value = item_value(record, metric, generates, reference_bytes)
        if value is not None:
            sums.setdefault(record["item_id"], []).append(value)
    return {item: sum(values) / len(values) for item, values in sums.items()}


def interval_of(values: Sequence[float]) -> Interval:
    """The mean over items with its interval (Wilson for 0/1 items, BCa bootstrap otherwise)."""
    return metric_interval(list(values))


def interval_json(interval: Interval) -> dict:
    def clean(x: float | None) -> float | None:
        return None if x is None or not math.isfinite(x) else round(x, 6)

    return {
        "mean": clean(interval.mean),
        "low": clean(interval.low),
        "high": clean(interval.high),
        "n": interval.n,
        "method": interval.method,
        "level": interval.level,
    }


def independent_seeds(records: Iterable[dict]) -> list[int]:
    return sorted({r["seed"] for r in records if not r["broadcast"]})


def group_metrics(records: Sequence[dict], generates: bool) -> dict:
    """Per stage, per (family, condition, variant): every reported metric with its interval."""
    stages: dict[str, dict[tuple, list[dict]]] = {}
    for record in records:
        key = tuple(record[k] for k in GROUP_KEYS)
        stages.setdefault(record["stage"], {}).setdefault(key, []).append(record)
    result: dict = {}
    for stage, groups in stages.items():
        rows = []
        for key, members in sorted(groups.items()):
            where: Where = {k: (v,) for k, v in zip(GROUP_KEYS, key, strict=True)}
            entry: dict = {**dict(zip(GROUP_KEYS, key, strict=True))}
            entry["items"] = len({m["item_id"] for m in members})
            entry["seeds"] = independent_seeds(members)
            for metric in REPORTED_METRICS:
                values = item_values(members, stage, where, metric, generates)
                if values:
                    entry[metric] = interval_json(interval_of(list(values.values())))
            zeros = [
                m["target_probability_zero"] for m in members if m["target_probability_zero"] is not None
            ]
            if zeros:
                entry["zero_probability_rate"] = round(sum(zeros) / len(zeros), 6)
            entry["unanswered"] = sum(m["status"] != "ok" for m in members if not m["broadcast"])
            rows.append(entry)
        result[stage] = rows
    return result


def per_seed_accuracy(records: Sequence[dict], generates: bool) -> dict:
    """stage → seed → plain accuracy over the stage's items (no interval: a view of seed spread)."""
    out: dict[str, dict[str, float]] = {}
    sums: dict[tuple[str, int], list[float]] = {}
    for record in records:
        value = item_value(record, "accuracy", generates)
        if value is not None:
            sums.setdefault((record["stage"], record["seed"]), []).append(value)
    for (stage, seed), values in sorted(sums.items()):
        out.setdefault(stage, {})[str(seed)] = round(sum(values) / len(values), 6)
    return out
