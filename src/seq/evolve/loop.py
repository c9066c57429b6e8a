"""`seq evolve run`: Evaluate → Diagnose → Generate → Validate → Promote → Report, per cycle.

Every eval goes through `seq.eval.run` into the record; the promoted conditions become the next
version of the benchmark (`seq.evolve.versions`), which the next cycle evaluates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from seq.authoring.benchmark import spec_of
from seq.authoring.conditions import Condition
from seq.capture.trace import read_trace
from seq.evolve import state as log
from seq.evolve.clusters import FailedEpisode, cluster, features
from seq.evolve.detectors import Baseline, baselines, detect, peak_forces
from seq.evolve.gates import PROMOTE, REVIEW, Thresholds, critics, decide, difficulty, novelty, rate, semantic
from seq.evolve.llm import Endpoint
from seq.evolve.operators import Candidate, generate, supported
from seq.evolve.versions import STAGING_SUFFIX, all_conditions, evolved_conditions, register
from seq.record.store import Store, VersionRow
from seq.registry.deploy import load_version, resolve


@dataclass(frozen=True)
class Settings:
    """How big a cycle is: tasks, seeds and trials of the target's eval, the reference's trials,
    candidates per cluster, and the gates' thresholds."""

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


def evals_of(cycle: dict[str, Any]) -> list[str]:
    """The target's evals of a cycle: the base conditions', then the evolved ones' (if any)."""
    return list(cycle.get("eval_ids") or [cycle["eval_id"]])


def _outcomes(eval_ids: str | Sequence[str], store: Store) -> dict[str, dict[int, tuple[float, Any]]]:
    """condition identity → trial → (success, episode), over one eval or several."""
    out: dict[str, dict[int, tuple[float, Any]]] = {}
    for eval_id in [eval_ids] if isinstance(eval_ids, str) else eval_ids:
        conditions = {item.item_id: item.condition for item in store.items(eval_id)}
        for episode in store.episodes(eval_id):
            c = conditions[episode.item_id]
            success = float(episode.metrics.get("success", 0.0)) if episode.ok else 0.0
            out.setdefault(_identity(c), {})[episode.trial] = (success, episode)
    return out


def _identity(c: Condition) -> str:
    return f"{c.key}|max_steps={c.max_steps}"


def _evaluate(
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
    )
    if report.status != "completed" or not report.episodes:
        why = report.unfinished[0].reason if report.unfinished else report.status
        raise RuntimeError(f"eval {report.eval_id} of {policy} on {row.label} did not complete: {why}")
    return report.eval_id


def _profiles(eval_ids: Sequence[str], store: Store) -> dict[str, dict[str, float]]:
    """Per condition: the target's success rate and the median steps of its successes."""
    import statistics

    out = {}
    for ident, runs in _outcomes(eval_ids, store).items():
        wins = [episode.steps for success, episode in runs.values() if success >= 1.0]
        out[ident] = {
            "success": rate([s for s, _ in runs.values()]),
            "steps": float(statistics.median(wins)) if wins else 0.0,
        }
    return out


def diagnose(eval_ids: Sequence[str], store: Store) -> tuple[list[FailedEpisode], dict[str, Baseline]]:
    """Read the evals' traces, detect each failed episode's failures."""
    items = {item.item_id: item for eval_id in eval_ids for item in store.items(eval_id)}
    traced = []
    for eval_id in eval_ids:
        for episode in store.episodes(eval_id):
            path = episode.artifacts.get("trace")
            if path:
                traced.append((episode, read_trace(path)))
    base = baselines([t for _, t in traced])
    failed = []
    for episode, trace in traced:
        found = detect(trace, base.get(trace.header["task"]))
        if found:
            item = items[episode.item_id]
            failed.append(
                FailedEpisode(
                    episode.item_id, item.condition.to_dict(), episode.trial, found, features(trace, found)
                )
            )
    return failed, base


def summarize(found: Any, endpoint: Endpoint | None) -> str | None:
    """A sentence on a failure cluster from the LLM endpoint (None without one or on its timeout)."""
    if endpoint is None:
        return None
    from seq.evolve.llm import Deferred

    try:
        return endpoint.ask(
            "You summarise robot policy failure clusters in one sentence.",
            f"Cluster signature: {found.signature()}; evidence of its first member: "
            f"{found.members[0].failures[0].evidence}.",
        ).strip()[:400]
    except Deferred:
        return None


def _suites(row: VersionRow, settings: Settings) -> tuple[list[str], list[str]]:
    """The suites chosen of the root benchmark, and those evolve added to this version."""
    spec = spec_of(load_version(row))
    chosen = list(settings.suites or [spec.default_suite])
    return chosen, [s for s in evolved_conditions(row) if s not in chosen]


def run_cycle(
    benchmark: str,
    policy: str,
    reference: str,
    settings: Settings,
    store: Store,
    endpoint: Endpoint | None = None,
    say: Any = print,
) -> dict[str, Any]:
    """One cycle from the benchmark's latest evolved version (or `benchmark` as given)."""
    state = log.load(benchmark.partition("@")[0])
    name = state["benchmark"]
    row = resolve("benchmark", state["cycles"][-1]["next"] if state["cycles"] else benchmark, store)
    number = len(state["cycles"]) + 1
    cycle: dict[str, Any] = {
        "cycle": number,
        "base": row.label,
        "policy": policy,
        "reference": reference,
        "started_at": time.time(),
        "thresholds": asdict(settings.thresholds),
    }
    say(f"cycle {number}: evaluate {policy} on {row.label}")
    base_suites, evolved_suites = _suites(row, settings)
    evaluate = partial(_evaluate, policy, row, settings=settings, trials=settings.trials,
                       params=settings.policy_params, store=store)  # fmt: skip
    cycle["eval_ids"] = [evaluate(base_suites)]
    if evolved_suites:  # exactly the promoted conditions: their own seeds, not the settings' ones
        cycle["eval_ids"].append(evaluate(evolved_suites, narrow=False))
    cycle["eval_id"] = cycle["eval_ids"][0]
    failed, base = diagnose(cycle["eval_ids"], store)
    clusters = cluster(failed)
    cycle["failed_episodes"] = len(failed)
    cycle["clusters"] = [{**c.to_dict(), "summary": summarize(c, endpoint)} for c in clusters]
    say(
        f"  diagnose: {len(failed)} failed episodes, {len(clusters)} clusters "
        f"({', '.join(f'{c.id} {c.type} ×{len(c.members)}' for c in clusters)})"
    )
    existing = all_conditions(row)
    default_steps = spec_of(load_version(row)).max_steps
    candidates = generate(
        clusters,
        supported(load_version(row)),
        {_identity(c) for c in existing},
        settings.per_cluster,
        endpoint,
        prefix=f"y{number}c",
        profiles=_profiles(cycle["eval_ids"], store),
        least_success=settings.thresholds.drop + settings.thresholds.margin,
        limit=settings.max_candidates,
    )
    say(f"  generate: {len(candidates)} candidates by {sorted({c.operator for c in candidates})}")
    cycle["candidates"] = []
    if candidates:
        cycle["candidates"] = _validate(
            name, row, candidates, cycle, clusters, base, existing, default_steps, settings, store, endpoint
        )
    promoted = [c for c in cycle["candidates"] if c["decision"] == PROMOTE]
    review = [c for c in cycle["candidates"] if c["decision"] == REVIEW]
    say(
        f"  validate: {len(promoted)} promote, {len(review)} to review, "
        f"{len(cycle['candidates']) - len(promoted) - len(review)} rejected"
    )
    cycle["next"] = row.label
    if promoted:
        cycle["next"] = promote(name, row, promoted, number, store).label
        say(f"  promote: {len(promoted)} conditions → {cycle['next']}")
    cycle["finished_at"] = time.time()
    state["cycles"].append(cycle)
    log.save(state)
    return cycle


def _validate(
    name: str,
    row: VersionRow,
    candidates: list[Candidate],
    cycle: dict[str, Any],
    clusters: list[Any],
    base: dict[str, Baseline],
    existing: list[Condition],
    default_steps: int,
    settings: Settings,
    store: Store,
    endpoint: Endpoint | None,
) -> list[dict[str, Any]]:
    suite = f"candidates-y{cycle['cycle']}"
    staging = register(
        name + STAGING_SUFFIX,
        row,
        {suite: [c.condition for c in candidates]},
        {"label": f"candidates of {row.label}, cycle {cycle['cycle']}"},
        store,
    )
    cycle["staging"] = staging.label
    target_eval = _evaluate(
        cycle["policy"],
        staging,
        [suite],
        settings,
        settings.trials,
        settings.policy_params,
        store,
        traces=False,
        narrow=False,
    )
    reference_eval = _evaluate(
        cycle["reference"],
        staging,
        [suite],
        settings,
        settings.reference_trials,
        settings.reference_params,
        store,
        narrow=False,
    )
    cycle["validation_evals"] = {"target": target_eval, "reference": reference_eval}
    seeds, target, reference = (_outcomes(e, store) for e in (cycle["eval_ids"], target_eval, reference_eval))
    types = {c.id: c.type for c in clusters}
    out = []
    for candidate in candidates:
        ident = _identity(candidate.condition)
        seed_runs = {t: s for t, (s, _) in seeds.get(_identity(candidate.seed), {}).items()}
        target_runs = {t: s for t, (s, _) in target.get(ident, {}).items()}
        reference_runs = reference.get(ident, {})
        hard = difficulty(seed_runs, target_runs)
        peak = 0.0
        for _, episode in reference_runs.values():
            if episode.artifacts.get("trace"):
                forces = peak_forces(read_trace(episode.artifacts["trace"]))
                peak = max(peak, float(forces.max()) if len(forces) else 0.0)
        task_base = base.get(candidate.condition.task, Baseline())
        verdicts = critics(
            hard["candidate_success"],
            [s for s, _ in reference_runs.values()],
            peak,
            task_base.peak_force,
            settings.thresholds,
            semantic(endpoint, candidate.condition.task, candidate.condition, candidate.seed),
        )
        distance = novelty(candidate.condition, existing, default_steps)
        decision, reasons = decide(hard, verdicts, distance, settings.thresholds)
        out.append(
            {
                "id": candidate.id,
                "condition": candidate.condition.to_dict(),
                "seed": candidate.seed.to_dict(),
                "operator": candidate.operator,
                "cluster": candidate.cluster,
                "cluster_type": types[candidate.cluster],
                "difficulty": hard,
                "critics": verdicts,
                "novelty": distance,
                "reference_success": rate([s for s, _ in reference_runs.values()]),
                "decision": decision,
                "reasons": reasons,
            }
        )
    return out


def promote(name: str, row: VersionRow, chosen: list[dict[str, Any]], cycle: int, store: Store) -> VersionRow:
    """Register `name`'s next version: `row` plus the chosen candidates, in suite `evolved-yN`."""
    suite = f"evolved-y{cycle}"
    previous = evolved_conditions(row).get(suite, [])
    conditions = previous + [Condition.from_dict({**c["condition"], "suite": suite}) for c in chosen]
    added = [
        {
            "condition": Condition.from_dict(c["condition"]).key,
            "max_steps": c["condition"]["max_steps"],
            "seed": Condition.from_dict(c["seed"]).key,
            "operator": c["operator"],
            "cluster": c["cluster"],
            "cluster_type": c["cluster_type"],
            "candidate": c["id"],
            "drop": c["difficulty"]["drop"],
            "reference_success": c["reference_success"],
        }
        for c in chosen
    ]
    manifest = {"label": f"{name} evolved, cycle {cycle}", "cycle": cycle, "added": added, "from": row.label}
    return register(name, row, {suite: conditions}, manifest, store)


def run(
    benchmark: str,
    policy: str,
    reference: str,
    cycles: int = 1,
    settings: Settings | None = None,
    endpoint: Endpoint | None = None,
    store: Store | None = None,
    say: Any = print,
) -> list[dict[str, Any]]:
    """Run `cycles` evolve cycles of `benchmark` against target `policy` and `reference`; returns
    each cycle's log (also kept in `SEQ_HOME/evolve/NAME.json`)."""
    store = store or Store()
    settings = settings or Settings()
    return [run_cycle(benchmark, policy, reference, settings, store, endpoint, say) for _ in range(cycles)]
