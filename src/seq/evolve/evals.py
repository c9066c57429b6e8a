"""The evals a cycle runs and what it reads back from them: the settings of a cycle, running an
eval into the record, and each condition's outcomes by trial (`seq.evolve.loop` drives them)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq.authoring.conditions import Condition
from seq.evolve.gates import Thresholds, rate
from seq.record.episode import EpisodeResult
from seq.record.states import EvalStatus
from seq.record.store import EvalRow, Store, VersionRow


@dataclass(frozen=True)
class Settings:
    """How big a cycle is: tasks, seeds and trials of the target's eval, the reference's trials,
    candidates per cluster, and the gates' thresholds. `trials` is also the size of the gate's
    and the re-estimate's blocks of fresh trials (`seq.evolve.evidence.TrialBlocks`).
    `on_start` / `on_result` are passed to each eval's `seq.eval.run` (its progress)."""

    tasks: Sequence[str] | None = None
    suites: Sequence[str] | None = None
    seeds: Sequence[int] | None = None
    trials: int = 10
    reference_trials: int = 2
    per_cluster: int = 2
    max_candidates: int = 24
    policy_params: dict[str, Any] = field(default_factory=dict)
    reference_params: dict[str, Any] = field(default_factory=dict)
    thresholds: Thresholds = field(default_factory=Thresholds)
    envs: int | None = None
    on_start: Callable[[EvalRow], None] | None = field(default=None, compare=False)
    on_result: Callable[[EpisodeResult], None] | None = field(default=None, compare=False)


def evals_of(cycle: dict[str, Any]) -> list[str]:
    """The target's evals of a cycle: the base conditions', then the evolved ones' (if any)."""
    return list(cycle.get("eval_ids") or [cycle["eval_id"]])


def outcomes(eval_ids: str | Sequence[str], store: Store) -> dict[str, dict[int, tuple[float, Any]]]:
    """condition identity → trial → (success, episode), over one eval or several."""
    out: dict[str, dict[int, tuple[float, Any]]] = {}
    for eval_id in [eval_ids] if isinstance(eval_ids, str) else eval_ids:
        conditions = {item.item_id: item.condition for item in store.items(eval_id)}
        for episode in store.episodes(eval_id):
            c = conditions[episode.item_id]
            success = float(episode.metrics.get("success", 0.0)) if episode.ok else 0.0
            out.setdefault(identity(c), {})[episode.trial] = (success, episode)
    return out


def identity(c: Condition) -> str:
    return f"{c.key}|max_steps={c.max_steps}"


def evaluate(
    policy: str,
    row: VersionRow,
    suites: list[str],
    settings: Settings,
    trials: int,
    params: dict[str, Any],
    store: Store,
    traces: bool = True,
    narrow: bool = True,
) -> str:
    """Run one eval into the record; `narrow`: only the settings' tasks and seeds."""
    import seq.eval

    report = seq.eval.run(
        policy,
        benchmark=row.label,
        suites=suites,
        tasks=settings.tasks if narrow else None,
        seeds=settings.seeds if narrow else None,
        trials=trials,
        params=params or None,
        traces=traces,
        envs=settings.envs,
        store=store,
        on_start=settings.on_start,
        on_result=settings.on_result,
    )
    if report.status != EvalStatus.COMPLETED or not report.episodes:
        why = report.unfinished[0].reason if report.unfinished else report.status
        raise RuntimeError(f"eval {report.eval_id} of {policy} on {row.label} did not complete: {why}")
    return report.eval_id


def profiles(eval_ids: Sequence[str], store: Store) -> dict[str, dict[str, float]]:
    """Per condition: the target's success rate and the median steps of its successes."""
    out = {}
    for ident, runs in outcomes(eval_ids, store).items():
        wins = [episode.steps for success, episode in runs.values() if success >= 1.0]
        out[ident] = {
            "success": rate([s for s, _ in runs.values()]),
            "steps": float(statistics.median(wins)) if wins else 0.0,
        }
    return out
