"""What a trace's scene holds, for the detectors that need more than the env's numbers: which
bodies are the robot, the fixed scene, distractors, and which the instruction names.

A trace's header names each geom's body (`geom_body`) and whether it is welded to the world
(`geom_fixed`); a distractor is a body `seq` added (`seq_distractor…`, MetaWorld's distractor
injection), one a condition lists in `extra["distractors"]` (name prefixes), or, where the trace
has an instruction, a movable object the instruction does not name (LIBERO's scenes). The
instruction is the header's or the condition's `instruction` when the benchmark gives one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from seq.capture.trace import Trace

DISTRACTOR_PREFIX = "seq_distractor"
# MetaWorld's Sawyer and robosuite's (LIBERO's) robots: their bodies' name prefixes
ROBOT_PREFIXES = ("robot", "gripper", "mount", "right_", "left_", "hand", "rightclaw", "leftclaw",
                  "rightpad", "leftpad", "pedestal", "torso", "base")  # fmt: skip
WORDS_IGNORED = {"the", "a", "an", "of", "on", "in", "to", "and", "it", "put", "pick", "up", "place",
                 "main", "object", "link", "body", "top", "into", "from", "with"}  # fmt: skip


@dataclass(frozen=True)
class Touch:
    """The first step (0-based) a body was touched by the robot, and how many steps it was."""

    body: str
    step: int
    steps: int


def bodies(trace: Trace) -> tuple[list[str], list[bool]] | None:
    """Each geom's body name and whether it is fixed; None when the trace has no contacts."""
    names = trace.header.get("geom_body")
    if not names:
        return None
    fixed = trace.header.get("geom_fixed") or [n in ("world", "") or "table" in n for n in names]
    return list(names), [bool(f) for f in fixed]


def is_robot(body: str) -> bool:
    return body.startswith(ROBOT_PREFIXES)


def distractors(trace: Trace) -> set[str]:
    """The scene's distractor bodies: those `seq` or the condition names so, and where the trace
    has an instruction, every movable object it does not name (LIBERO's other objects)."""
    found = bodies(trace)
    if found is None:
        return set()
    names, fixed = found
    listed = (trace.header.get("extra") or {}).get("distractors", ())
    out = {b for b in names if b.startswith((DISTRACTOR_PREFIX, *map(str, listed)))}
    text = instruction(trace)
    if text is not None:
        wanted = words(text)
        movable = {n for n, f in zip(names, fixed, strict=True) if not f and n and not is_robot(n)}
        out |= {n for n in movable if not words(n) & wanted}
    return out


def instruction(trace: Trace) -> str | None:
    extra = trace.header.get("extra") or {}
    text = trace.header.get("instruction") or extra.get("instruction")
    return str(text) if text else None


def words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z]+", text.lower()) if len(w) > 2 and w not in WORDS_IGNORED}


def contacts_of(
    trace: Trace, body_set: set[str], movable_only: bool = True
) -> list[tuple[int, str, str, float]]:
    """(step, the body of `body_set`, the other body, normal force) of every contact of a body in
    `body_set` with a body outside it that is not the fixed scene (with `movable_only`)."""
    found = bodies(trace)
    if found is None:
        return []
    names, fixed = found
    out = []
    for step, (pairs, forces) in enumerate(trace.contacts):
        for pair, force in zip(np.asarray(pairs).reshape(-1, 2), np.asarray(forces).ravel(), strict=False):
            a, b = (int(g) for g in pair)
            for mine, other in ((a, b), (b, a)):
                if names[mine] in body_set and names[other] not in body_set:
                    if not (movable_only and fixed[other]):
                        out.append((step, names[mine], names[other], float(abs(force))))
    return out


def robot_touches(trace: Trace) -> dict[str, Touch]:
    """Every movable non-robot body the robot touched: when first, and on how many steps."""
    found = bodies(trace)
    if found is None:
        return {}
    names, fixed = found
    robot = {n for n in names if is_robot(n)}
    first: dict[str, int] = {}
    steps: dict[str, set[int]] = {}
    for step, _, other, _ in contacts_of(trace, robot):
        first.setdefault(other, step)
        steps.setdefault(other, set()).add(step)
    return {body: Touch(body, first[body], len(steps[body])) for body in first}
