"""Mutation operators: each turns a failure seed's condition into harder candidate conditions.

The protocol is small: an operator has a `name` and `mutate(condition, cluster, how)` returning
new `seq.Condition`s of the same benchmark. A benchmark opts in with a class attribute
`evolve_operators = {name: how}` saying which operators it supports and with what settings
(MetaWorld: `seq.shelf.metaworld_variants.EVOLVE_OPERATORS`); `instruction` (paraphrase) needs a
benchmark whose conditions carry an `instruction` its policies read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from seq.authoring.conditions import Condition
from seq.evolve.clusters import FailureCluster
from seq.evolve.llm import Deferred, Endpoint

# Which way to push a condition, by the failure it showed (physics factor names in order tried).
PHYSICS_BY_TYPE = {
    "drop": ("friction", "mass"),
    "grasp_failure": ("friction", "mass"),
    "contact_anomaly": ("damping", "mass"),
    "stall": ("damping", "friction"),
}


def _ident(condition: Condition) -> str:
    return f"{condition.key}|max_steps={condition.max_steps}"


class Operator(Protocol):
    @property
    def name(self) -> str:
        """The operator's name in a benchmark's `evolve` declaration."""

    def mutate(
        self, condition: Condition, cluster: FailureCluster, how: Mapping[str, Any]
    ) -> list[Condition]:
        """Harder variants of `condition`, a member of `cluster`, as the benchmark's `how` allows."""


def _variant(condition: Condition, operator: str, **changes: Any) -> Condition:
    extra = dict(condition.extra)
    max_steps = changes.pop("max_steps", condition.max_steps)
    for key, value in changes.items():
        extra[key] = round(float(value), 4) if isinstance(value, float) else value
    return Condition(
        task=condition.task,
        seed=condition.seed,
        variation=condition.variation,
        max_steps=max_steps,
        timeout_s=condition.timeout_s,
        suite=condition.suite,
        extra=extra,
    )


@dataclass(frozen=True)
class PosePerturbation:
    """Moves the object (and the goal, where the benchmark's `keys` include it) away from where it
    failed: a fixed step in two directions, seeded by the condition."""

    name: str = "pose"

    def mutate(
        self, condition: Condition, cluster: FailureCluster, how: Mapping[str, Any]
    ) -> list[Condition]:
        step, most = float(how.get("step_m", 0.05)), float(how.get("max_m", 0.12))
        keys = tuple(how.get("keys", ("obj_dx", "obj_dy", "goal_dx", "goal_dy")))
        rng = np.random.default_rng(condition.seed + 7919 * len(cluster.members))
        angle = rng.uniform(0, 2 * np.pi)
        out = []
        for turn in range(2):
            a = angle + turn * np.pi / 2
            dx, dy = step * 1.6 * np.cos(a), step * 1.6 * np.sin(a)
            clipped = [
                float(np.clip(v + condition.extra.get(k, 0.0), -most, most))
                for v, k in ((dx, "obj_dx"), (dy, "obj_dy"))
            ]
            out.append(_variant(condition, self.name, obj_dx=clipped[0], obj_dy=clipped[1]))
            if "goal_dx" in keys:
                out.append(_variant(condition, self.name, goal_dx=-clipped[0], goal_dy=-clipped[1]))
        return out


@dataclass(frozen=True)
class PhysicsSwap:
    """Scales friction, object mass or joint damping, in the direction the failure type suggests."""

    name: str = "physics"

    def mutate(
        self, condition: Condition, cluster: FailureCluster, how: Mapping[str, Any]
    ) -> list[Condition]:
        out = []
        for key in PHYSICS_BY_TYPE.get(cluster.type, ("friction", "damping")):
            for factor in how.get(key, ()):
                out.append(_variant(condition, self.name, **{key: float(factor)}))
        return out


@dataclass(frozen=True)
class HorizonChange:
    """Shortens the step limit to fractions of the condition's own (or the benchmark's)."""

    name: str = "horizon"

    def mutate(
        self, condition: Condition, cluster: FailureCluster, how: Mapping[str, Any]
    ) -> list[Condition]:
        base = condition.max_steps or int(how.get("max_steps", 500))
        floor = int(how.get("min_steps", 20))
        # Fractions of the steps the target's successes took on the seed, where the loop knows them.
        scale = float(how.get("seed_steps") or base)
        limits = sorted({max(floor, int(scale * f)) for f in how.get("fractions", (0.5,))}, reverse=True)
        return [
            _variant(condition, self.name, max_steps=limit, horizon=limit) for limit in limits if limit < base
        ]


@dataclass(frozen=True)
class DistractorInjection:
    """Adds a distractor object near the condition's object: one in the way (part of the way to
    the goal) and one beside it at an angle seeded by the condition, each kind in turn. The kinds
    are the benchmark's `objects` (LIBERO: objects of its asset set) or `shapes` (MetaWorld)."""

    name: str = "distractor"

    def mutate(
        self, condition: Condition, cluster: FailureCluster, how: Mapping[str, Any]
    ) -> list[Condition]:
        if condition.extra.get("distractor"):
            return []  # one distractor a scene
        shapes = tuple(how.get("objects") or how.get("shapes") or ("box",))
        beside = float(how.get("beside_m", 0.07))
        rng = np.random.default_rng(condition.seed + 104729)
        out = []
        for n, along in enumerate(how.get("along", (0.5,))):
            out.append(
                _variant(condition, self.name, distractor=shapes[n % len(shapes)], distractor_along=along)
            )
        angle = rng.uniform(0, 2 * np.pi)
        out.append(
            _variant(
                condition,
                self.name,
                distractor=shapes[len(out) % len(shapes)],
                distractor_dx=beside * np.cos(angle),
                distractor_dy=beside * np.sin(angle),
            )
        )
        return out


@dataclass(frozen=True)
class InstructionParaphrase:
    """Rewrites a condition's `instruction`: by templates, or by the LLM `endpoint` when given
    (templates again when it does not answer in time)."""

    endpoint: Endpoint | None = None
    name: str = "instruction"

    TEMPLATES = ("Please {x}.", "Could you {x}?", "Your job: {x}.")

    def paraphrases(self, instruction: str, count: int = 2) -> list[str]:
        if self.endpoint is not None:
            try:
                text = self.endpoint.ask(
                    "You paraphrase robot instructions. Reply with a JSON list of strings only.",
                    f"Give {count} paraphrases of: {instruction}",
                )
                found = [str(p) for p in json.loads(text) if str(p).strip()][:count]
                if found:
                    return found
            except (Deferred, ValueError, TypeError):
                pass
        lowered = instruction.rstrip(".").strip()
        lowered = lowered[:1].lower() + lowered[1:]
        return [t.format(x=lowered) for t in self.TEMPLATES[:count]]

    def mutate(
        self, condition: Condition, cluster: FailureCluster, how: Mapping[str, Any]
    ) -> list[Condition]:
        instruction = condition.extra.get("instruction")
        if not instruction:
            return []
        return [_variant(condition, self.name, instruction=p) for p in self.paraphrases(str(instruction))]


OPERATORS: dict[str, Operator] = {
    "pose": PosePerturbation(),
    "physics": PhysicsSwap(),
    "horizon": HorizonChange(),
    "distractor": DistractorInjection(),
    "instruction": InstructionParaphrase(),
}


def supported(benchmark_cls: type) -> dict[str, Mapping[str, Any]]:
    """The operators a benchmark class opts into, with its settings for each."""
    declared = getattr(benchmark_cls, "evolve_operators", None) or {}
    return {name: how for name, how in declared.items() if name in OPERATORS}


@dataclass(frozen=True)
class Candidate:
    """A proposed condition: what it came from (`seed_key`), by which operator, from which cluster."""

    id: str
    condition: Condition
    seed: Condition
    operator: str
    cluster: str


def generate(
    clusters: Sequence[FailureCluster],
    operators: Mapping[str, Mapping[str, Any]],
    existing: set[str],
    per_cluster: int = 2,
    endpoint: Endpoint | None = None,
    prefix: str = "c",
    profiles: Mapping[str, Mapping[str, float]] | None = None,
    least_success: float = 0.0,
    limit: int | None = None,
) -> list[Candidate]:
    """Candidates from each cluster's conditions, by every supported operator, leaving out
    conditions that exist already. `profiles` (condition key → the target's `success` rate and
    median successful `steps` there) picks the `per_cluster` seeds the target succeeds on most
    (at least `least_success`: a drop needs room) and scales the horizon. At most `limit`,
    taken from the clusters and operators in turn."""
    profiles = profiles or {}
    chosen = {**OPERATORS, "instruction": InstructionParaphrase(endpoint)}
    seen = set(existing)
    queues: list[list[tuple[Condition, Condition, str, str]]] = []  # per cluster, operators interleaved
    for cluster in clusters:
        seeds = [Condition.from_dict(raw) for raw in cluster.conditions]
        seeds = [s for s in seeds if profiles.get(_ident(s), {}).get("success", 1.0) >= least_success]
        seeds.sort(key=lambda s: -profiles.get(_ident(s), {}).get("success", 0.0))
        by_operator: dict[str, list[tuple[Condition, Condition, str, str]]] = {}
        for seed in seeds[:per_cluster]:
            profile = profiles.get(_ident(seed), {})
            for name, declared in operators.items():
                how = {**declared, "seed_steps": profile.get("steps")} if name == "horizon" else declared
                for condition in chosen[name].mutate(seed, cluster, how):
                    if _ident(condition) not in seen:
                        seen.add(_ident(condition))
                        by_operator.setdefault(name, []).append((condition, seed, name, cluster.id))
        queues.append(_interleave(list(by_operator.values())))
    picked = _interleave(queues)[:limit]
    return [Candidate(f"{prefix}{n}", *entry) for n, entry in enumerate(picked, 1)]


def _interleave(lists: list[list[Any]]) -> list[Any]:
    """One from each list in turn, until all are used: every cluster and operator gets its share
    of a limited number of candidates."""
    out, depth = [], max((len(x) for x in lists), default=0)
    for index in range(depth):
        out += [x[index] for x in lists if index < len(x)]
    return out
