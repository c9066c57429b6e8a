"""Validate and promote: evaluate the candidates (a staging version of the benchmark), score
them with the critics and gates, and register the promoted ones as the benchmark's next version."""

from __future__ import annotations

from typing import Any

from seq.authoring.conditions import Condition
from seq.capture.trace import read_trace
from seq.evolve.detectors import Baseline, peak_forces
from seq.evolve.evals import Settings, evaluate, identity, outcomes
from seq.evolve.gates import critics, decide, difficulty, novelty, rate, semantic
from seq.evolve.llm import Endpoint
from seq.evolve.operators import Candidate
from seq.evolve.versions import STAGING_SUFFIX, evolved_conditions, register
from seq.record.store import Store, VersionRow


def validate(
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
    target_eval = evaluate(
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
    reference_eval = evaluate(
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
    seeds, target, reference = (outcomes(e, store) for e in (cycle["eval_ids"], target_eval, reference_eval))
    types = {c.id: c.type for c in clusters}
    out = []
    for candidate in candidates:
        ident = identity(candidate.condition)
        seed_runs = {t: s for t, (s, _) in seeds.get(identity(candidate.seed), {}).items()}
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
