"""Properties: what the algorithm learned, each one metric over a stage's probes, with its verdict.

A property is UNCALIBRATED until a calibration file (written by `seqbench calibrate` from weak and
strong reference runs) gives it a threshold; then it is PASS (value ≥ threshold) or FAIL, with the
value, its interval and the references the threshold came from as the evidence. A property the
references did not separate keeps UNCALIBRATED and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from seq.seqbench.calibration import Thresholds
from seq.seqbench.metrics import independent_seeds, interval_json, interval_of, item_values
from seq.seqbench.specs import PropertySpec, RunSpec

UNCALIBRATED, PASS, FAIL, NOT_MEASURED = "UNCALIBRATED", "PASS", "FAIL", "NOT MEASURED"


def resolved_metric(prop: PropertySpec, generates: bool) -> str:
    if prop.metric == "accuracy":
        return "exact_match" if generates else "choice_accuracy"
    return prop.metric


def property_items(records: Sequence[dict], prop: PropertySpec, generates: bool) -> dict[str, float]:
    """item id → value for one property (mean over the independent seeds)."""
    return item_values(records, prop.stage, prop.where, prop.metric, generates, prop.reference_bytes)


def evaluate_properties(
    spec: RunSpec, records: Sequence[dict], generates: bool, thresholds: Thresholds | None
) -> list[dict]:
    """Every property of the spec: value, interval, n, and PASS/FAIL/UNCALIBRATED with evidence."""
    results = []
    for prop in spec.properties.values():
        values = property_items(records, prop, generates)
        stage_records = [r for r in records if r["stage"] == prop.stage]
        entry = {
            "name": prop.name,
            "description": prop.description,
            "stage": prop.stage,
            "where": {k: list(v) for k, v in prop.where.items()},
            "metric": resolved_metric(prop, generates),
            "privileged_supervision": prop.privileged,
            "seeds": independent_seeds(stage_records),
            "items": len(values),
        }
        if not values:
            entry.update(value=None, interval=None, status=NOT_MEASURED, threshold=None)
            entry["evidence"] = "no item of this stage matches the property (are the task files given?)"
            results.append(entry)
            continue
        interval = interval_of(list(values.values()))
        entry["value"] = interval_json(interval)["mean"]
        entry["interval"] = interval_json(interval)
        entry.update(apply_threshold(prop.name, interval.mean, interval, thresholds))
        results.append(entry)
    return results


def apply_threshold(name: str, value: float, interval, thresholds: Thresholds | None) -> dict:
    """The verdict of one property against the calibration (or why there is none)."""
    shown = f"{value:.3f} [{_fmt(interval.low)}, {_fmt(interval.high)}]"
    if thresholds is None:
        return {
            "status": UNCALIBRATED,
            "threshold": None,
            "evidence": f"{shown}; no calibration for this spec yet",
        }
    entry = thresholds.properties.get(name)
    if entry is None or entry.get("threshold") is None:
        why = entry.get("note") if entry else "the calibration does not cover this property"
        return {"status": UNCALIBRATED, "threshold": None, "evidence": f"{shown}; {why}"}
    threshold = entry["threshold"]
    status = PASS if value >= threshold else FAIL
    weak, strong = entry.get("weak_best", {}), entry.get("strong_worst", {})
    evidence = (
        f"{shown} {'≥' if status == PASS else '<'} threshold {threshold:.3f} "
        f"(weak best {weak.get('run', '?')} {_fmt(weak.get('value'))}, "
        f"strong worst {strong.get('run', '?')} {_fmt(strong.get('value'))}; {thresholds.source})"
    )
    if interval.low is not None and interval.high is not None and interval.low < threshold <= interval.high:
        evidence += "; the interval straddles the threshold"
    return {"status": status, "threshold": threshold, "evidence": evidence}


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"
