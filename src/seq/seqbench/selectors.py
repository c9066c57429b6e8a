"""Declarative row selection: where/exclude clauses, control/stress pairing, stable hash sampling."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from seq.errors import SeqInputError
from seq.seqbench.specs import RunSpec, Selector, Where
from seq.seqbench.tasks import TaskRow


def matches(row: TaskRow, where: Where) -> bool:
    """True when every column of the clause holds one of its allowed values."""
    return all(row.value(column) in allowed for column, allowed in where.items())


def stable_rank(sampling_seed: int, key: str) -> str:
    """The sampling order of a key: independent of the other rows, so adding rows moves nothing."""
    return hashlib.sha256(f"{sampling_seed}:{key}".encode()).hexdigest()


def _sample_keys(keys: Iterable[str], n: int | None, fraction: float | None, sampling_seed: int) -> set[str]:
    ordered = sorted(set(keys), key=lambda k: stable_rank(sampling_seed, k))
    count = n if n is not None else math.ceil(len(ordered) * (fraction or 1.0))
    return set(ordered[:count])


@dataclass(frozen=True)
class Selection:
    """The rows one selector picked, and what the pairing/sampling kept or dropped."""

    name: str
    rows: tuple[TaskRow, ...]
    matched: int
    incomplete_pairs: int = 0
    pairs: int = 0

    def to_json(self) -> dict:
        return {
            "matched": self.matched,
            "selected": len(self.rows),
            "pairs": self.pairs,
            "incomplete_pairs_dropped": self.incomplete_pairs,
            "ids": [r.id for r in self.rows],
        }


def select(rows: Sequence[TaskRow], selector: Selector, sampling_seed: int) -> Selection:
    """Apply a selector: filter, then pair (complete pairs only), then sample by stable hash."""
    chosen = [
        r
        for r in rows
        if matches(r, selector.where) and not (selector.exclude and matches(r, selector.exclude))
    ]
    matched = len(chosen)
    incomplete = pairs = 0
    if selector.pairs is not None:
        control, stress = selector.pairs
        groups: dict[str, list[TaskRow]] = {}
        for row in chosen:
            groups.setdefault(row.pair_id, []).append(row)
        kept: list[TaskRow] = []
        for members in groups.values():
            controls = [r for r in members if matches(r, control)]
            stresses = [r for r in members if matches(r, stress) and r not in controls]
            if controls and stresses:
                kept.extend(controls + stresses)
                pairs += 1
            else:
                incomplete += 1
        chosen = kept
    if selector.sample is not None:
        by = selector.sample.by
        keys = _sample_keys(
            (r.value(by) for r in chosen), selector.sample.n, selector.sample.fraction, sampling_seed
        )
        chosen = [r for r in chosen if r.value(by) in keys]
        if selector.pairs is not None:
            pairs = len({r.pair_id for r in chosen})
    return Selection(selector.name, tuple(chosen), matched, incomplete, pairs)


def select_all(rows: Sequence[TaskRow], spec: RunSpec) -> dict[str, Selection]:
    """Every selector of the spec over the rows; a selector that picks nothing is bad input."""
    selections = {
        name: select(rows, selector, spec.sampling_seed) for name, selector in spec.selectors.items()
    }
    used = {name for stage in spec.stages for name in (*stage.learn_select, *stage.infer_select)}
    for name in used:
        if not selections[name].rows and not spec.selectors[name].optional:
            raise SeqInputError(
                f"{spec.path}: selectors.{name} selects no row of the given task files (check --tasks)."
            )
    return selections


def union(selections: dict[str, Selection], names: Iterable[str]) -> list[TaskRow]:
    """The rows of several selectors, each row once, in first-seen order."""
    seen: dict[str, TaskRow] = {}
    for name in names:
        for row in selections[name].rows:
            seen.setdefault(row.id, row)
    return list(seen.values())
