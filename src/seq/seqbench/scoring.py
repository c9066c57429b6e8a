"""Per-item scoring: one prediction record per (seed, stage, row), and the values metrics average.

- `exact_match`: the generated output equals the target, token for token (1 or 0).
- `choice_correct`: the target has the highest log-probability among the row's candidates; ties share
  the credit (1/k for a k-way tie at the top), so a uniform scorer earns chance, not zero.
- `target_log_probability`: the log-probability of the target; `null` (probability zero) is -inf,
  and averages floor it at LOG_PROBABILITY_FLOOR so one zero does not swamp a mean.
- A request the algorithm did not answer (a failed or over-budget call) scores 0 and the floor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from seq.seqbench.protocol import GENERATE, Request
from seq.seqbench.tasks import TaskRow

LOG_PROBABILITY_FLOOR = -20.0
OK, MISSING, CALL_FAILED = "ok", "missing", "call_failed"


def choice_credit(
    candidates: Sequence[str | None], log_probabilities: Sequence[Any], target: str | None
) -> float:
    """Credit for ranking the target first among candidates (null = probability zero)."""
    values = [-math.inf if lp is None else lp for lp in log_probabilities]
    best = max(values)
    top = [c for c, v in zip(candidates, values, strict=True) if v == best]
    return 1.0 / len(top) if target in top else 0.0


def prediction_records(
    rows: Sequence[TaskRow],
    requests: Sequence[Request],
    answers: dict[str, object],
    call_ok: bool,
    seed: int,
    stage: str,
    checkpoint_bytes: int | None,
) -> list[dict]:
    """One record per row: the answers to its requests, and the item values they earn."""
    by_row: dict[str, list[Request]] = {}
    for request in requests:
        by_row.setdefault(request.row_id, []).append(request)
    records = []
    for row in rows:
        mine = by_row.get(row.id, [])
        generated = [r for r in mine if r.kind == GENERATE]
        scored = [r for r in mine if r.kind != GENERATE]
        output = answers.get(generated[0].id) if generated else None
        answered = all(r.id in answers for r in mine)
        log_probabilities = [answers.get(r.id) for r in scored] if scored and answered else None
        record = {
            "seed": seed,
            "stage": stage,
            "item_id": row.id,
            "family": row.family,
            "split": row.split,
            "condition": row.condition,
            "variant": row.variant,
            "pair_id": row.pair_id,
            "input": row.input,
            "target": row.target,
            "output": output if generated else None,
            "candidates": [r.target for r in scored] if scored else None,
            "log_probabilities": log_probabilities,
            "exact_match": None,
            "choice_correct": None,
            "target_log_probability": None,
            "target_probability_zero": None,
            "status": OK if answered else (CALL_FAILED if not call_ok else MISSING),
            "broadcast": False,
            "source_seed": seed,
            "checkpoint_bytes": checkpoint_bytes,
        }
        if generated:
            record["exact_match"] = 1.0 if answered and output == row.target else 0.0
        if scored:
            if log_probabilities is None:
                record["choice_correct"] = 0.0
                record["target_log_probability"] = LOG_PROBABILITY_FLOOR
            else:
                candidates = [r.target for r in scored]
                record["choice_correct"] = choice_credit(candidates, log_probabilities, row.target)
                target_lp = log_probabilities[candidates.index(row.target)]
                record["target_probability_zero"] = target_lp is None
                record["target_log_probability"] = -math.inf if target_lp is None else target_lp
        records.append(record)
    return records


def item_value(
    record: dict, metric: str, generates: bool, reference_bytes: int | None = None
) -> float | None:
    """The value one record earns for a metric; None where the algorithm cannot be asked."""
    if metric == "accuracy":
        metric = "exact_match" if generates else "choice_accuracy"
    if metric == "exact_match":
        return record["exact_match"]
    if metric == "choice_accuracy":
        return record["choice_correct"]
    if metric == "target_log_probability":
        value = record["target_log_probability"]
        return None if value is None else max(LOG_PROBABILITY_FLOOR, value)
    if metric == "size_discounted_accuracy":
        base = item_value(record, "accuracy", generates)
        size = record["checkpoint_bytes"]
        if base is None:
            return None
        if not size:
            return base if record["status"] == OK else 0.0
        return base * min(1.0, (reference_bytes or size) / size)
    raise ValueError(f"unknown metric {metric}")
