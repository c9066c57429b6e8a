"""Run a benchmark's `@seq.score` once per group: all episodes, each suite's, each task's."""

from __future__ import annotations

import traceback

from seq.authoring.benchmark import spec_of
from seq.record.groups import groups
from seq.record.store import GroupKey, Store


def score_groups(
    benchmark_cls: type, store: Store, eval_id: str
) -> dict[GroupKey, tuple[dict[str, float] | None, str | None]]:
    """Each group's score values (or the error its score hook raised), over episodes that did not error."""
    spec = spec_of(benchmark_cls)
    if "score" not in spec.hooks:
        return {}
    results = store.episodes(eval_id)
    score = getattr(benchmark_cls(), spec.hooks["score"])
    scored: dict[GroupKey, tuple[dict[str, float] | None, str | None]] = {}
    for key, members in groups(r for r in results if r.ok).items():
        try:
            values = score(members)
            if not isinstance(values, dict):
                raise TypeError(f"@seq.score returned {type(values).__name__}; expected a dict of numbers.")
            scored[key] = ({str(k): float(v) for k, v in values.items()}, None)
        except Exception:
            scored[key] = (None, traceback.format_exc())
    return scored
