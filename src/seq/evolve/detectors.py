"""Failure detectors: heuristics over one episode's trace, each giving a type, a step and evidence.

They read what a MetaWorld-style env exposes (`info["success"]`, `obj_to_target`, `near_object`,
`grasp_success`; the hand at `obs[0:3]` and the object at `obs[4:7]`) and MuJoCo contacts; a
detector whose inputs a trace lacks says nothing, and `unavailable` says why for the ones
that need what only some benchmarks expose (a distractor, an instruction). `Baseline` holds
what successful episodes of the same task look like (their peak contact force), so that
"excess force" is relative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from seq.capture.trace import Trace
from seq.evolve import scene

# The order a failure is named in when an episode shows several: the most specific first.
TYPES = (
    "contact_anomaly",
    "instruction_mismatch",
    "distractor_interaction",
    "drop",
    "grasp_failure",
    "out_of_reach",
    "failed_recovery",
    "stall",
    "final_pose_error",
    "timeout",
)
STALL_WINDOW = 60  # steps without progress
STALL_PROGRESS = 0.01  # metres of obj_to_target (or of the hand) that count as progress
REACH_DISTANCE = 0.05  # the hand never came this close to the object
POSE_TOLERANCE = 0.05  # final obj_to_target above this: the object was left off its goal
FORCE_FACTOR = 2.0  # a peak this many times the successful episodes' highest is anomalous
FORCE_FLOOR = 500.0  # newtons: never anomalous below this
RECOVERY_GAIN = 0.02  # metres towards the goal that count as progress made
RECOVERY_LOSS = 0.03  # metres given back (and not regained by the end) that count as progress lost


@dataclass(frozen=True)
class Failure:
    """One detected failure: its `type` (one of `TYPES`), the `step` it happened at, `evidence`."""

    type: str
    step: int
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "step": self.step, "evidence": self.evidence}


@dataclass(frozen=True)
class Baseline:
    """What a task's successful episodes look like: their highest peak contact force, and whether
    they grasp (a task solved without grasping has no grasp failures)."""

    peak_force: float = 0.0
    grasps: bool = False

    @property
    def force_limit(self) -> float:
        return max(FORCE_FLOOR, FORCE_FACTOR * self.peak_force)


def _series(trace: Trace, key: str) -> np.ndarray | None:
    values = [info.get(key) for info in trace.infos]
    if not values or any(v is None for v in values):
        return None
    return np.asarray(values, dtype=float)


def _vector(observation: Any) -> np.ndarray | None:
    return observation if isinstance(observation, np.ndarray) and observation.ndim == 1 else None


def _positions(trace: Trace, start: int, stop: int) -> np.ndarray | None:
    rows = [_vector(o) for o in trace.observations[1:]]
    if not rows or any(r is None or len(r) < stop for r in rows):
        return None
    return np.stack([r[start:stop] for r in rows])  # type: ignore[index]


def peak_forces(trace: Trace) -> np.ndarray:
    """Each step's largest contact normal force (0 where there was no contact)."""
    return np.array([float(np.abs(f).max()) if len(f) else 0.0 for _, f in trace.contacts])


def succeeded(trace: Trace) -> bool:
    metrics = (trace.end or {}).get("metrics") or {}
    return float(metrics.get("success", 0.0)) >= 1.0


def timeout(trace: Trace, baseline: Baseline) -> Failure | None:
    ended_by = (trace.end or {}).get("ended_by")
    if ended_by in ("max_steps", "env", "timeout"):
        return Failure("timeout", trace.steps, {"ended_by": ended_by, "steps": trace.steps})
    return None


def stall(trace: Trace, baseline: Baseline) -> Failure | None:
    distance = _series(trace, "obj_to_target")
    hand = _positions(trace, 0, 3)
    if distance is None or len(distance) <= STALL_WINDOW:
        return None
    for start in range(0, len(distance) - STALL_WINDOW, STALL_WINDOW // 2):
        window = slice(start, start + STALL_WINDOW)
        gained = float(distance[window][0] - distance[window].min())
        moved = 0.0 if hand is None else float(np.linalg.norm(np.ptp(hand[window], axis=0)))
        if gained < STALL_PROGRESS and distance[window][0] > POSE_TOLERANCE:
            return Failure(
                "stall",
                start,
                {"window": STALL_WINDOW, "progress_m": round(gained, 4), "hand_moved_m": round(moved, 4)},
            )
    return None


def out_of_reach(trace: Trace, baseline: Baseline) -> Failure | None:
    near = _series(trace, "near_object")
    if near is not None:  # the env's own judgement, where it gives one
        if near.any():
            return None
        return Failure("out_of_reach", trace.steps, {"near_object_steps": 0})
    hand, target = _positions(trace, 0, 3), _positions(trace, 4, 7)
    if hand is None or target is None:
        return None
    gaps = np.linalg.norm(hand - target, axis=1)
    if float(gaps.min()) > REACH_DISTANCE:
        return Failure("out_of_reach", int(gaps.argmin()) + 1, {"closest_m": round(float(gaps.min()), 4)})
    return None


def grasp_failure(trace: Trace, baseline: Baseline) -> Failure | None:
    grasped, near = _series(trace, "grasp_success"), _series(trace, "near_object")
    if not baseline.grasps or grasped is None or near is None or not near.any():
        return None
    if not grasped.any():
        first_near = int(np.argmax(near > 0)) + 1
        return Failure("grasp_failure", first_near, {"near_steps": int((near > 0).sum())})
    return None


def drop(trace: Trace, baseline: Baseline, hold: int = 5) -> Failure | None:
    grasped = _series(trace, "grasp_success")
    if grasped is None or not baseline.grasps:
        return None
    held = 0
    for step, value in enumerate(grasped):
        if value > 0:
            held += 1
        elif held >= hold and not grasped[step : step + hold].any():
            return Failure("drop", step + 1, {"held_steps": held})
        else:
            held = 0
    return None


def contact_anomaly(trace: Trace, baseline: Baseline) -> Failure | None:
    forces = peak_forces(trace)
    if not len(forces):
        return None
    limit = baseline.force_limit
    over = np.flatnonzero(forces > limit)
    if len(over):
        step = int(over[0])
        pairs = trace.contacts[step][0]
        bodies = trace.header.get("geom_body") or []
        named = [[bodies[int(g)] if int(g) < len(bodies) else int(g) for g in pair] for pair in pairs[:4]]
        return Failure(
            "contact_anomaly",
            step + 1,
            {"peak_n": round(float(forces.max()), 1), "limit_n": round(limit, 1), "pairs": named},
        )
    return None


def final_pose_error(trace: Trace, baseline: Baseline) -> Failure | None:
    distance = _series(trace, "obj_to_target")
    if distance is None or not len(distance) or distance[-1] <= POSE_TOLERANCE:
        return None
    return Failure("final_pose_error", trace.steps, {"final_m": round(float(distance[-1]), 4)})


def failed_recovery(trace: Trace, baseline: Baseline, hold: int = 5) -> Failure | None:
    """Progress lost and not regained by the end: a grasp held then let go and never held again,
    or the object brought towards its goal and then left further from it than its best."""
    grasped = _series(trace, "grasp_success")
    if grasped is not None and baseline.grasps:
        runs = _runs(grasped > 0)
        if runs and runs[-1][1] - runs[-1][0] >= hold and runs[-1][1] < len(grasped) - hold:
            lost = runs[-1][1]
            return Failure(
                "failed_recovery",
                lost + 1,
                {
                    "lost": "grasp",
                    "held_steps": runs[-1][1] - runs[-1][0],
                    "steps_after": len(grasped) - lost,
                },
            )
    distance = _series(trace, "obj_to_target")
    if distance is None or not len(distance):
        return None
    best_step = int(distance.argmin())
    best, final = float(distance[best_step]), float(distance[-1])
    if distance[0] - best < RECOVERY_GAIN or final - best < RECOVERY_LOSS or final <= POSE_TOLERANCE:
        return None
    lost = best_step + int(np.argmax(distance[best_step:] > best + RECOVERY_LOSS))
    return Failure(
        "failed_recovery",
        lost + 1,
        {
            "lost": "distance",
            "best_m": round(best, 4),
            "final_m": round(final, 4),
            "best_step": best_step + 1,
        },
    )


def distractor_interaction(trace: Trace, baseline: Baseline) -> Failure | None:
    """The robot or the task's object touched a distractor (contacts with the fixed scene, such
    as the table it stands on, and those the scene started with do not count)."""
    found = scene.contacts_of(trace, scene.distractors(trace))
    resting = {(d, o) for step, d, o, _ in found if step == 0}  # how the scene started: not an interaction
    found = [c for c in found if (c[1], c[2]) not in resting]
    if not found:
        return None
    step, distractor, other, _ = found[0]
    return Failure(
        "distractor_interaction",
        step + 1,
        {
            "distractor": distractor,
            "touched_by": sorted({o for _, _, o, _ in found})[:4],
            "contact_steps": len({s for s, *_ in found}),
            "peak_n": round(max(f for *_, f in found), 1),
            "first_other": other,
        },
    )


def instruction_mismatch(trace: Trace, baseline: Baseline) -> Failure | None:
    """The robot handled an object the instruction does not name before (or without) handling
    one it names: the instruction's words matched against the scene's body names."""
    text = scene.instruction(trace)
    touches = scene.robot_touches(trace)
    if text is None or not touches:
        return None
    wanted = scene.words(text)
    named = {body for body in touches if scene.words(body) & wanted}
    others = sorted((t for body, t in touches.items() if body not in named), key=lambda t: t.step)
    if not others:
        return None
    first_named = min((touches[b].step for b in named), default=None)
    wrong = others[0]
    if first_named is not None and first_named <= wrong.step:
        return None
    return Failure(
        "instruction_mismatch",
        wrong.step + 1,
        {
            "instruction": text,
            "touched": wrong.body,
            "touched_steps": wrong.steps,
            "named_touched": sorted(named),
        },
    )


def unavailable(trace: Trace) -> dict[str, str]:
    """The detectors that cannot judge this trace, each with why (a detector missing here and
    silent on a trace found nothing)."""
    why = {}
    if scene.bodies(trace) is None:
        reason = "the trace has no contacts (the env exposes no MuJoCo model)"
        why["distractor_interaction"] = why["instruction_mismatch"] = why["contact_anomaly"] = reason
        return why
    if not scene.distractors(trace):
        why["distractor_interaction"] = "the scene holds no distractor"
    text = scene.instruction(trace)
    if text is None:
        why["instruction_mismatch"] = "the benchmark exposes no instruction for this condition"
    else:
        names = set(scene.bodies(trace)[0])  # type: ignore[index]
        if not any(scene.words(n) & scene.words(text) for n in names if not scene.is_robot(n)):
            why["instruction_mismatch"] = f"no body of the scene is named in the instruction {text!r}"
    return why


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The [start, stop) spans where `mask` holds."""
    edges = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True))


DETECTORS: dict[str, Callable[[Trace, Baseline], Failure | None]] = {
    "contact_anomaly": contact_anomaly,
    "instruction_mismatch": instruction_mismatch,
    "distractor_interaction": distractor_interaction,
    "drop": drop,
    "grasp_failure": grasp_failure,
    "out_of_reach": out_of_reach,
    "failed_recovery": failed_recovery,
    "stall": stall,
    "final_pose_error": final_pose_error,
    "timeout": timeout,
}


def detect(trace: Trace, baseline: Baseline | None = None) -> list[Failure]:
    """Every failure a trace of an unsuccessful episode shows, most specific first (none for a
    successful one)."""
    if succeeded(trace):
        return []
    baseline = baseline or Baseline()
    found = [DETECTORS[name](trace, baseline) for name in TYPES]
    return [failure for failure in found if failure is not None]


def baselines(traces: Sequence[Trace]) -> dict[str, Baseline]:
    """Per task, the baseline of its successful episodes."""
    peaks: dict[str, float] = {}
    grasps: dict[str, bool] = {}
    for trace in traces:
        if succeeded(trace):
            forces = peak_forces(trace)
            task = trace.header["task"]
            peaks[task] = max(peaks.get(task, 0.0), float(forces.max()) if len(forces) else 0.0)
            held = _series(trace, "grasp_success")
            grasps[task] = grasps.get(task, False) or bool(held is not None and held.any())
    return {task: Baseline(peak, grasps[task]) for task, peak in peaks.items()}
