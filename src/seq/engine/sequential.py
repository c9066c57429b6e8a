"""Sequential comparison of two arms: run pairs in rounds, stop as soon as the test decides.

The plan holds every pair up to `max_trials`, in a fixed order (trial by trial, condition by
condition), so a rerun or a resume stops at the same point. Episodes of a round run in parallel;
the decision is taken only when a round is complete, on its pairs in plan order, by the
group-sequential McNemar test of `seq.stats.sequential` (O'Brien–Fleming-type Lan–DeMets spending).
It also stops for equivalence when the repeated confidence interval, valid under the stopping
rule, lies within ±threshold (at any look, the last included). An episode that errored leaves its
pair out of the test. Trials of one condition are repeated measures: each look is tested at its
effective number of pairs (the design effect of the pairs' differences within their conditions), so
another trial of a deterministic policy adds no evidence.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from seq.errors import SeqInputError
from seq.record.arguments import SequentialOptions
from seq.record.manifest import SequentialDecision
from seq.record.store import EvalRow, Store, WorkItem


def check_sequential(options: SequentialOptions, arms: int) -> None:
    if arms != 2:
        raise SeqInputError(
            f"--sequential compares two arms (a policy and --vs POLICY); this eval has {arms}."
        )
    if not 0 < options.alpha < 1:
        raise SeqInputError(f"--alpha must be between 0 and 1, got {options.alpha}.")
    if options.looks < 1:
        raise SeqInputError(f"--looks must be 1 or more, got {options.looks}.")


def _design(options: SequentialOptions, pairs: int) -> Any:
    from seq.stats import SequentialDesign

    return SequentialDesign(alpha=options.alpha, max_pairs=pairs, looks=min(options.looks, pairs))


def plan_rounds(
    items: list[WorkItem], all_items: list[WorkItem], options: SequentialOptions
) -> list[list[WorkItem]]:
    """The unfinished `items`, split into one round per look of the design."""
    order = {key: index for index, key in enumerate(dict.fromkeys(i.pair_key for i in all_items))}
    looks = _design(options, len(order)).look_pairs
    rounds: list[list[WorkItem]] = [[] for _ in looks]
    for item in items:
        index = order[item.pair_key]
        rounds[next(k for k, n in enumerate(looks) if index < n)].append(item)
    return rounds


def decide(eval_row: EvalRow, store: Store) -> SequentialDecision | None:
    """The decision on the pairs finished so far, or None to go on. Recorded in the manifest."""
    from seq.stats import paired_table, usable_threshold, within_threshold
    from seq.stats.paired import pair_design_effect
    from seq.stats.sequential import UNDECIDED
    from seq.stats.sequential import decide as decide_at_looks

    options = eval_row.arguments.sequential
    assert options is not None
    arms = eval_row.manifest.arm_names
    order = list(dict.fromkeys(item.pair_key for item in store.items(eval_row.id)))
    design = _design(options, len(order))
    finished: dict[str, set[str]] = {arm: set() for arm in arms}
    outcomes: dict[str, dict[str, float]] = {arm: {} for arm in arms}
    conditions: dict[str, tuple[str, str]] = {}
    for episode in store.episodes(eval_row.id):
        finished[episode.arm].add(episode.pair_key)
        conditions[episode.pair_key] = (episode.condition_key, episode.task)
        if episode.ok and options.metric in episode.metrics:
            outcomes[episode.arm][episode.pair_key] = episode.metrics[options.metric]
    tables, deffs = [], []
    for pairs in design.look_pairs:
        window = order[:pairs]
        if not all(key in finished[arm] for key in window for arm in arms):
            break  # this look's round has not finished
        both = [key for key in window if all(key in outcomes[arm] for arm in arms)]
        a, b = [outcomes[arms[0]][k] for k in both], [outcomes[arms[1]][k] for k in both]
        tables.append(paired_table(a, b))
        clusters = [conditions[k][0] for k in both]
        deffs.append(pair_design_effect(a, b, clusters, [conditions[k][1] for k in both]).deff)
    decision = decide_at_looks(tables, design, deffs)
    verdict = decision.decision
    threshold = usable_threshold(eval_row.arguments.threshold)
    if verdict in ("continue", UNDECIDED) and within_threshold(decision.interval, threshold):
        verdict = "within threshold"
    if verdict == "continue":
        return None
    summary = SequentialDecision(
        decision=verdict,
        look=decision.look,
        looks=len(design.look_pairs),
        pairs_used=decision.pairs_used,
        pairs_planned=len(order),
        statistic=_finite(decision.statistic),
        boundary=_finite(decision.boundary),
        interval=asdict(decision.interval),
        metric=options.metric,
        alpha=options.alpha,
        test="group-sequential McNemar, O'Brien–Fleming-type Lan–DeMets spending"
        + (", clustered by condition" if any(d != 1.0 for d in deffs) else ""),
    )
    store.update_manifest(eval_row.id, sequential=summary)
    return summary


def _finite(value: float) -> float | None:
    """JSON has no NaN or infinity: a statistic not computed (no discordant pair) is None."""
    return value if math.isfinite(value) else None
