"""Expand a benchmark's conditions × trials × arms into work items with stable ids."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from seq.authoring.benchmark import BenchmarkSpec
from seq.authoring.conditions import Condition, check_max_steps, check_seed, check_timeout, reseeded
from seq.errors import SeqInputError
from seq.record.work import WorkItem, item_id

MOST_ITEMS = 10**7  # episodes in one eval: its work items are planned and stored up front


def _check_count(conditions: int, trials: int, arms: int) -> None:
    """Refuse an eval of more episodes than `MOST_ITEMS`, before any is planned."""
    count = conditions * trials * arms
    if count > MOST_ITEMS:
        raise SeqInputError(
            f"the eval would hold {count:,} episodes ({conditions:,} conditions × {trials:,} "
            f"trials × {arms} arms); at most {MOST_ITEMS:,}: narrow --tasks, --seeds or --trials."
        )


def _pick_suites(spec: BenchmarkSpec, suites: Sequence[str] | None) -> list[Condition]:
    names = list(suites) if suites else [spec.default_suite]
    chosen: list[Condition] = []
    seen: set[str] = set()
    for name in names:
        if name not in spec.suites:
            close = difflib.get_close_matches(name, list(spec.suites), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise SeqInputError(
                f"--suite {name}: benchmark {spec.name!r} has no such suite "
                f"(it has: {', '.join(spec.suites)}).{hint}"
            )
        for condition in spec.suites[name]:
            if condition.key not in seen:
                seen.add(condition.key)
                chosen.append(condition)
    return chosen


def plan(
    spec: BenchmarkSpec,
    *,
    suites: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    max_steps: int | None = None,
    trials: int = 1,
    timeout_s: float | None = None,
    arms: Sequence[str] = (),
) -> list[WorkItem]:
    """The work items of an eval, in a stable order.

    `tasks` and `seeds` narrow the benchmark's conditions (`seeds` may also name seeds the
    benchmark does not list: each task's conditions are then repeated with those seeds);
    `max_steps` and `timeout_s` override every condition's own limits. With several `arms`, each condition and
    trial is one item per arm (the arms' episodes pair up by condition, seed and trial).
    """
    check_max_steps(max_steps, "--max-steps")
    check_timeout(timeout_s, "--timeout-s")
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= MOST_ITEMS:
        raise SeqInputError(f"--trials must be a positive integer up to {MOST_ITEMS:,}, got {trials!r}.")
    conditions = _pick_suites(spec, suites)
    if tasks:
        known = list(dict.fromkeys(c.task for c in conditions))
        for task in tasks:
            if task not in known:
                close = difflib.get_close_matches(task, known, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else f" It has: {', '.join(known[:12])}."
                raise SeqInputError(f"--tasks {task}: benchmark {spec.name!r} has no such task.{hint}")
        conditions = [c for c in conditions if c.task in set(tasks)]
    if seeds is not None:
        if len(seeds) > MOST_ITEMS:
            raise SeqInputError(
                f"--seeds names {len(seeds):,} seeds; an eval holds at most {MOST_ITEMS:,} episodes."
            )
        seeds = list(dict.fromkeys(int(seed) for seed in seeds))
        if not seeds:
            raise SeqInputError("--seeds is empty; give at least one seed.")
        for seed in seeds:
            check_seed(seed, "--seeds")
        _check_count(len(reseeded(conditions, [0])) * len(seeds), trials, len(arms) or 1)
        conditions = reseeded(conditions, seeds)
    if max_steps is not None:
        conditions = [Condition(**{**c.to_dict(), "max_steps": max_steps}) for c in conditions]
    if timeout_s is not None:
        conditions = [Condition(**{**c.to_dict(), "timeout_s": timeout_s}) for c in conditions]
    arms = list(arms) or [""]
    _check_count(len(conditions), trials, len(arms))
    items: list[WorkItem] = []
    for trial in range(trials):  # trial-major, so that any prefix covers every condition evenly
        for condition in conditions:
            for arm in arms:
                items.append(
                    WorkItem(
                        item_id(condition, trial, trials, arm, len(arms)), len(items), condition, trial, arm
                    )
                )
    return items
