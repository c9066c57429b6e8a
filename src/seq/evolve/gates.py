"""Critics and promotion gates: whether a candidate condition is harder, solvable, new and sane.

Each critic gives a verdict (`pass`, `fail`, `deferred` or `skipped`) with its evidence:
- safety: the reference's peak contact force on the candidate stays under `force_limit`
  (`FORCE_FACTOR` × the peak of successful episodes of the task, at least `FORCE_FLOOR`);
- robustness: the candidate separates the reference from the target by at least `separation`;
- solvability: the reference succeeds on at least `solvable` of its episodes;
- semantic: an LLM judge (an OpenAI-compatible endpoint) finds the variant a fair version of the
  task, judging the first frames of the seed and the variant as rendered (`seq.evolve.frames`);
  `deferred` when it does not answer in time, `skipped` without an endpoint.

The gates, with their thresholds (`Thresholds`): difficulty (the target's success on the seed
condition minus on the candidate, on fresh trials paired by act seed, at least `drop`, and the
one-sided exact McNemar test of "no drop" at p ≤ `alpha`: `seq.evolve.evidence`), solvability,
novelty (distance from every existing condition of the task at least `novelty`) and the
critics' agreement. A candidate that passes them all is promoted; one that misses by a little
(its drop within `margin` of `drop` with the test passed, the reference within `margin` of
`solvable`, a reference whose one outcome finishes within `reference_margin` of the step limit,
or a critic deferred) waits for review; any other is rejected. Every number that decided is kept
as evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seq.authoring.conditions import Condition
from seq.errors import SeqInputError
from seq.evolve.detectors import FORCE_FLOOR
from seq.evolve.evidence import EXACT_TEST, thin_margin
from seq.evolve.llm import Deferred, Endpoint

PROMOTE, REVIEW, REJECT = "promote", "review", "reject"
SAFETY_FACTOR = 3.0


@dataclass(frozen=True)
class Thresholds:
    """The gates' thresholds (success rates as fractions).

    `alpha`: the one-sided level of the difficulty gate's exact test, per candidate (a candidate
    with no true drop is promoted at most this often). `reference_margin`: the least share of a
    candidate's step limit that a reference with a single outcome must leave unused."""

    drop: float = 0.30
    solvable: float = 0.80
    novelty: float = 0.10
    separation: float = 0.20
    margin: float = 0.10
    alpha: float = 0.05
    reference_margin: float = 0.10

    def __post_init__(self) -> None:
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 1:
            raise SeqInputError(f"Thresholds.alpha: expected a level between 0 and 1, got {self.alpha!r}.")


def _log(value: float) -> float:
    return math.log(max(float(value), 1e-6))


def variant_vector(condition: Condition, default_steps: int) -> list[float]:
    """A condition's variation as numbers on comparable scales (0.1 m, a factor e, the horizon,
    a distractor)."""
    e = condition.extra
    return (
        [float(e.get(k, 0.0)) / 0.1 for k in ("obj_dx", "obj_dy", "goal_dx", "goal_dy")]
        + [_log(e.get(k, 1.0)) for k in ("friction", "mass", "damping")]
        + [1.0 - (condition.max_steps or default_steps) / default_steps]
        # a distractor counts 1, its place in 0.1 m (and the share of the way to the goal)
        + [float(bool(e.get("distractor")))]
        + [float(e.get(k, 0.0)) / 0.1 for k in ("distractor_dx", "distractor_dy")]
        + [float(e.get("distractor_along", 0.0))]
    )


def novelty(candidate: Condition, existing: Sequence[Condition], default_steps: int) -> float:
    """Distance from the nearest existing condition of the same task and seed (inf: none)."""
    mine = variant_vector(candidate, default_steps)
    same = [c for c in existing if c.task == candidate.task and c.seed == candidate.seed]
    if not same:
        return math.inf
    return min(math.dist(mine, variant_vector(c, default_steps)) for c in same)


def rate(outcomes: Sequence[float]) -> float:
    return sum(outcomes) / len(outcomes) if outcomes else math.nan


def semantic(
    endpoint: Endpoint | None,
    task: str,
    condition: Condition,
    base: Condition,
    images: Mapping[str, bytes] | None = None,
    missing: str | None = None,
) -> dict[str, Any]:
    """The LLM judge's verdict on a variant. With `images` (`seed` and `variant`: each condition's
    first frame as PNG, `seq.evolve.frames`) the judge sees both scenes, the seed's first, and the
    changes as words beside them; without (`missing` says why), the words alone. The evidence
    says which it judged."""
    if endpoint is None:
        return {"verdict": "skipped", "reason": "no endpoint configured"}
    changes = {k: v for k, v in condition.extra.items() if base.extra.get(k) != v}
    shown = [name for name in ("seed", "variant") if images and name in images]
    pictures = (
        " The images are the first frame of the seed condition, then of the variant, from the "
        "benchmark's camera: judge the scene you see (is the task's object still there, reachable, "
        "not buried or hidden?)."
        if shown == ["seed", "variant"]
        else ""
    )
    question = (
        f"Task: {task}. Seed condition: {dict(base.extra)} (max_steps {base.max_steps}). "
        f"Variant changes: {changes} (max_steps {condition.max_steps}).{pictures} Is the variant still "
        'a fair, coherent version of the task? Reply with JSON {"verdict": "ok"|"reject", "reason": "..."}.'
    )
    sent = [images[name] for name in shown] if pictures and images else []
    seen: dict[str, Any] = (
        {"judged": "images", "images": shown}
        if sent
        else {"judged": "description", "images": [], "no_images": missing or "no frame was drawn"}
    )
    try:
        reply = endpoint.ask("You judge robot benchmark variants.", question, sent)
    except Deferred as why:
        return {"verdict": "deferred", "reason": str(why), **seen}
    import json

    try:
        parsed = json.loads(reply)
        verdict = "pass" if str(parsed.get("verdict", "")).lower() == "ok" else "fail"
        return {"verdict": verdict, "reason": str(parsed.get("reason", ""))[:300], **seen}
    except (ValueError, AttributeError):
        return {"verdict": "deferred", "reason": f"unreadable reply: {reply[:120]!r}", **seen}


def critics(
    target_rate: float,
    reference_outcomes: Sequence[float],
    reference: dict[str, Any],
    reference_peak_n: float,
    baseline_peak_n: float,
    thresholds: Thresholds,
    semantic_verdict: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """Each critic's verdict with its evidence; `reference` is `evidence.reference_evidence`."""
    reference_rate = rate(reference_outcomes)
    limit = max(FORCE_FLOOR, SAFETY_FACTOR * baseline_peak_n)
    separation = reference_rate - target_rate
    return {
        "safety": {
            "verdict": "pass" if reference_peak_n <= limit else "fail",
            "peak_n": round(reference_peak_n, 1),
            "limit_n": round(limit, 1),
        },
        "robustness": {
            "verdict": "pass" if separation >= thresholds.separation else "fail",
            "separation": round(separation, 3),
            "reference_spread": round(_spread(reference_outcomes), 3),
        },
        "solvability": {
            "verdict": "pass" if reference_rate >= thresholds.solvable else "fail",
            "reference_success": round(reference_rate, 3),
            "episodes": len(reference_outcomes),
            "distinct": reference.get("distinct"),
            "limit": reference.get("limit"),
            "steps": reference.get("steps"),
            "spare": reference.get("spare"),
            "thin": thin_margin(reference, thresholds.reference_margin),
        },
        "semantic": semantic_verdict,
    }


def _spread(outcomes: Sequence[float]) -> float:
    if len(outcomes) < 2:
        return 0.0
    mean = rate(outcomes)
    return math.sqrt(sum((x - mean) ** 2 for x in outcomes) / (len(outcomes) - 1))


def difficulty_text(hard: dict[str, Any]) -> str:
    """`drop +0.50 on 10 fresh pairs (5 seed-only, 0 candidate-only), exact one-sided p = 0.031`."""
    return (
        f"drop {hard['drop']:+.2f} on {hard['pairs']} fresh pairs ({hard['seed_only']} seed-only, "
        f"{hard['candidate_only']} candidate-only), {EXACT_TEST} p = {hard['p_value']:.3g}"
    )


def decide(
    hard: dict[str, Any], verdicts: dict[str, dict[str, Any]], distance: float, thresholds: Thresholds
) -> tuple[str, list[str]]:
    """The decision and the reasons, gate by gate. `hard` is `evidence.difficulty`: the drop on
    fresh trials and its one-sided exact p-value; the test must pass at `alpha` for a candidate
    to be promoted or to wait for review."""
    t = thresholds
    reasons: list[str] = []
    borderline: list[str] = []
    significant = hard["pairs"] > 0 and hard["p_value"] <= t.alpha
    if not (significant and hard["drop"] >= t.drop):
        near = significant and hard["drop"] >= t.drop - t.margin
        (borderline if near else reasons).append(
            f"difficulty: {difficulty_text(hard)} (needs ≥ {t.drop:.2f} and p ≤ {t.alpha:g})"
        )
    solvability = verdicts["solvability"]
    solvable = solvability["reference_success"]
    if solvable < t.solvable:
        (borderline if solvable >= t.solvable - t.margin else reasons).append(
            f"solvability: reference {solvable:.2f} (needs ≥ {t.solvable:.2f})"
        )
    elif solvability.get("thin"):
        episodes = solvability["episodes"]
        what = "one episode" if episodes == 1 else f"{episodes} identical episodes"
        borderline.append(
            f"solvability: the reference's one outcome ({what}) finished {solvability['spare']} "
            f"steps inside the limit of {solvability['limit']}"
        )
    if distance < t.novelty:
        reasons.append(f"novelty: {distance:.3f} from an existing condition (needs ≥ {t.novelty:.2f})")
    for name in ("safety", "robustness", "semantic"):
        verdict = verdicts[name]["verdict"]
        if verdict == "fail":
            reasons.append(f"{name} critic: fail")
        elif verdict == "deferred":
            borderline.append(f"{name} critic: deferred ({verdicts[name].get('reason', '')[:80]})")
    if reasons:
        return REJECT, reasons + borderline
    if borderline:
        return REVIEW, borderline
    return PROMOTE, ["all gates passed"]
