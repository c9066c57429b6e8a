"""Validate and promote: evaluate the candidates (a staging version of the benchmark), score
them with the critics and gates, re-estimate the drop of those that passed, and register the
promoted ones as the benchmark's next version.

The target's evidence comes from trials the cycle's eval never ran (`seq.evolve.evidence`): the
engine numbers an eval's trials from 0, so the staging evals run the first blocks again
(identical episodes: the same condition, seed and trial replay exactly) and only the fresh block
is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seq.authoring.conditions import Condition
from seq.capture.trace import read_trace
from seq.evolve.detectors import Baseline, peak_forces
from seq.evolve.evals import Settings, evaluate, identity, outcomes
from seq.evolve.evidence import TrialBlocks, difficulty, estimate, reference_evidence
from seq.evolve.frames import Frames, first_frames
from seq.evolve.gates import PROMOTE, REVIEW, critics, decide, novelty, rate, semantic
from seq.evolve.llm import Endpoint
from seq.evolve.operators import Candidate
from seq.evolve.versions import STAGING_SUFFIX, evolved_conditions, register
from seq.record.paths import artifact_file
from seq.record.store import Store, VersionRow


def seed_conditions(candidates: Sequence[Candidate], suite: str) -> list[Condition]:
    """The distinct seed conditions of `candidates`, put in `suite` of a staging version."""
    seen: dict[str, Condition] = {}
    for c in candidates:
        seen.setdefault(identity(c.seed), Condition.from_dict({**c.seed.to_dict(), "suite": suite}))
    return list(seen.values())


def episodes_to_validate(candidates: Sequence[Candidate], settings: Settings) -> tuple[int, int]:
    """The target's and the reference's episodes `validate` runs (the target's first block of
    trials repeats the cycle's eval, unread)."""
    conditions = len(candidates) + len(seed_conditions(candidates, ""))
    return conditions * TrialBlocks(settings.trials).gate.stop, len(candidates) * settings.reference_trials


def _runs(found: dict[int, tuple[float, Any]]) -> dict[int, float | None]:
    """trial → success, None where the episode errored."""
    return {trial: (success if episode.ok else None) for trial, (success, episode) in found.items()}


def _images(frames: Frames, seed: Condition, condition: Condition) -> tuple[dict[str, bytes], str | None]:
    """The seed's and the candidate's first frames, and why any is missing."""
    keys = {"seed": seed.key, "variant": condition.key}
    found = {name: frames.images[key] for name, key in keys.items() if key in frames.images}
    why = [f"{n}: {frames.missing.get(key, 'not drawn')}" for n, key in keys.items() if n not in found]
    return found, "; ".join(why) or None


def _staging(
    name: str, row: VersionRow, suites: dict[str, list[Condition]], label: str, store: Store
) -> VersionRow:
    return register(name + STAGING_SUFFIX, row, suites, {"label": label}, store, internal=True)


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
    """Each candidate's evidence, critics and decision, from the gate's block of fresh trials."""
    number, blocks, t = cycle["cycle"], TrialBlocks(settings.trials), settings.thresholds
    suite, seed_suite = f"candidates-y{number}", f"seeds-y{number}"
    staging = _staging(
        name,
        row,
        {suite: [c.condition for c in candidates], seed_suite: seed_conditions(candidates, seed_suite)},
        f"candidates of {row.label}, cycle {number}",
        store,
    )
    cycle["staging"] = staging.label
    target_eval = evaluate(cycle["policy"], staging, [suite, seed_suite], settings, blocks.gate.stop,
                           settings.policy_params, store, traces=False, narrow=False)  # fmt: skip
    reference_eval = evaluate(cycle["reference"], staging, [suite], settings, settings.reference_trials,
                              settings.reference_params, store, narrow=False)  # fmt: skip
    cycle["validation_evals"] = {"target": target_eval, "reference": reference_eval}
    frames = Frames()
    if endpoint is not None:  # the semantic critic judges the scenes as drawn
        frames = first_frames(cycle["reference"], staging, [suite, seed_suite], settings,
                              settings.reference_params, store)  # fmt: skip
        cycle["validation_evals"]["frames"] = frames.eval_id
    chosen, target, reference = (outcomes(e, store) for e in (cycle["eval_ids"], target_eval, reference_eval))
    types = {c.id: c.type for c in clusters}
    out = []
    for candidate in candidates:
        ident = identity(candidate.condition)
        selection = _runs(chosen.get(identity(candidate.seed), {}))
        hard = difficulty(
            _runs(target.get(identity(candidate.seed), {})),
            _runs(target.get(ident, {})),
            blocks.gate,
            t.alpha,
        )
        reference_runs = list(reference.get(ident, {}).values())
        peak = 0.0
        for _, episode in reference_runs:
            trace = artifact_file(store.path.parent, reference_eval, episode.artifacts.get("trace"))
            if trace is not None:
                forces = peak_forces(read_trace(trace))
                peak = max(peak, float(forces.max()) if len(forces) else 0.0)
        limit = candidate.condition.max_steps or default_steps
        verdicts = critics(
            hard["candidate_success"],
            [s for s, _ in reference_runs],
            reference_evidence(reference_runs, limit),
            peak,
            base.get(candidate.condition.task, Baseline()).peak_force,
            t,
            semantic(
                endpoint,
                candidate.condition.task,
                candidate.condition,
                candidate.seed,
                *_images(frames, candidate.seed, candidate.condition),
            ),
        )
        distance = novelty(candidate.condition, existing, default_steps)
        decision, reasons = decide(hard, verdicts, distance, t)
        out.append(
            {
                "id": candidate.id,
                "condition": candidate.condition.to_dict(),
                "seed": candidate.seed.to_dict(),
                "operator": candidate.operator,
                "cluster": candidate.cluster,
                "cluster_type": types[candidate.cluster],
                # what chose the seed: its rate on the cycle's trials (the top of those that
                # failed once; kept to show the regression, never judged on)
                "selection": {
                    "seed_success": rate([s for s in selection.values() if s is not None]),
                    "trials": [blocks.selection.start, blocks.selection.stop],
                },
                "difficulty": hard,
                "critics": verdicts,
                "novelty": distance,
                "reference_success": rate([s for s, _ in reference_runs]),
                "decision": decision,
                "reasons": reasons,
            }
        )
    return out


def to_estimate(judged: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidates whose drop is re-estimated: those promoted or waiting for review."""
    return [c for c in judged if c["decision"] in (PROMOTE, REVIEW)]


def episodes_to_estimate(judged: Sequence[dict[str, Any]], settings: Settings) -> int:
    """The target's episodes `confirm` runs (its first two blocks of trials repeat, unread)."""
    chosen = to_estimate(judged)
    seeds = {identity(Condition.from_dict(c["seed"])) for c in chosen}
    return (len(chosen) + len(seeds)) * TrialBlocks(settings.trials).estimate.stop


def confirm(
    name: str,
    row: VersionRow,
    judged: list[dict[str, Any]],
    cycle: dict[str, Any],
    settings: Settings,
    store: Store,
) -> None:
    """Re-estimate the drop of the promoted and review candidates on the estimate's block of
    trials, which neither chose them nor decided on them; each gets `estimate`."""
    chosen = to_estimate(judged)
    if not chosen:
        return
    number, blocks = cycle["cycle"], TrialBlocks(settings.trials)
    suite = f"estimate-y{number}"
    seeds: dict[str, Condition] = {}
    for c in chosen:
        seed = Condition.from_dict({**c["seed"], "suite": suite})
        seeds.setdefault(identity(seed), seed)
    conditions = [Condition.from_dict({**c["condition"], "suite": suite}) for c in chosen]
    staging = _staging(name, row, {suite: conditions + list(seeds.values())},
                       f"estimates of {row.label}, cycle {number}", store)  # fmt: skip
    estimate_eval = evaluate(cycle["policy"], staging, [suite], settings, blocks.estimate.stop,
                             settings.policy_params, store, traces=False, narrow=False)  # fmt: skip
    cycle["validation_evals"]["estimate"] = estimate_eval
    found = outcomes(estimate_eval, store)
    for c in chosen:
        seed_runs = _runs(found.get(identity(Condition.from_dict(c["seed"])), {}))
        runs = _runs(found.get(identity(Condition.from_dict(c["condition"])), {}))
        c["estimate"] = estimate(seed_runs, runs, blocks.estimate)


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
            # the drop on trials that neither chose nor promoted it (a log from before: the gate's)
            "drop": (c.get("estimate") or c["difficulty"])["drop"],
            "gate_p": c["difficulty"].get("p_value"),
            "reference_success": c["reference_success"],
        }
        for c in chosen
    ]
    manifest = {"label": f"{name} evolved, cycle {cycle}", "cycle": cycle, "added": added, "from": row.label}
    return register(name, row, {suite: conditions}, manifest, store)
