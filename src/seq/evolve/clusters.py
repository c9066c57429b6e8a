"""Failure clusters: a compact embedding of each failed episode, grouped with DBSCAN.

The embedding is the failure's type (one-hot over `TYPES`, weighted so that two types never
share a cluster), when it happened (fraction of the episode), how far the object ended from its
goal, how much of the episode the object was held, and the peak contact force (log-scaled).
A cluster is a failure seed: its dominant type, the conditions that reproduce it and its
signature (the mean embedding, in words).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from seq.capture.trace import Trace
from seq.evolve.detectors import TYPES, Failure, peak_forces

TYPE_WEIGHT = 10.0  # larger than any distance within the other features
EPS = 0.6
MIN_SAMPLES = 2


@dataclass
class FailedEpisode:
    """A failed episode: its condition key, trial, item id, trace and what the detectors found."""

    item_id: str
    condition: dict[str, Any]
    trial: int
    failures: list[Failure]
    features: dict[str, float]

    @property
    def primary(self) -> Failure:
        return self.failures[0]


def features(trace: Trace, failures: Sequence[Failure]) -> dict[str, float]:
    """The numbers a failed episode is embedded from."""
    steps = max(trace.steps, 1)
    final = [info.get("obj_to_target") for info in trace.infos[-1:]]
    held = [info.get("grasp_success", 0.0) for info in trace.infos]
    forces = peak_forces(trace)
    return {
        "when": failures[0].step / steps if failures else 1.0,
        "final_m": float(final[0]) if final and final[0] is not None else 0.0,
        "held": float(np.mean(held)) if held else 0.0,
        "log_force": math.log10(1.0 + float(forces.max())) if len(forces) else 0.0,
        "steps": float(trace.steps),
    }


def embed(episode: FailedEpisode) -> np.ndarray:
    onehot = [TYPE_WEIGHT * (episode.primary.type == name) for name in TYPES]
    f = episode.features
    return np.array([*onehot, f["when"], min(f["final_m"], 0.5) * 2, f["held"], f["log_force"] / 4])


@dataclass
class FailureCluster:
    """A failure seed: `type` (the dominant one), its members and their mean features."""

    id: str
    type: str
    members: list[FailedEpisode] = field(default_factory=list)

    @property
    def conditions(self) -> list[dict[str, Any]]:
        """The distinct conditions its members failed on (each once)."""
        seen: dict[str, dict[str, Any]] = {}
        for member in self.members:
            seen.setdefault(_key(member.condition), member.condition)
        return list(seen.values())

    def signature(self) -> dict[str, Any]:
        means = {
            k: round(float(np.mean([m.features[k] for m in self.members])), 3)
            for k in self.members[0].features
        }
        types = Counter(m.primary.type for m in self.members)
        return {"type": self.type, "size": len(self.members), "types": dict(types), **means}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "signature": self.signature(),
            "conditions": self.conditions,
            "members": [
                {
                    "item_id": m.item_id,
                    "condition": _key(m.condition),
                    "trial": m.trial,
                    "failures": [f.to_dict() for f in m.failures],
                }
                for m in self.members
            ],
        }


def _key(condition: dict[str, Any]) -> str:
    from seq.authoring.conditions import Condition

    return Condition.from_dict(condition).key


def cluster(
    episodes: Sequence[FailedEpisode], eps: float = EPS, min_samples: int = MIN_SAMPLES
) -> list[FailureCluster]:
    """DBSCAN over the embeddings; noise points (in no cluster) are left out. Largest first."""
    if len(episodes) < min_samples:
        return []
    from sklearn.cluster import DBSCAN

    matrix = np.stack([embed(e) for e in episodes])
    labels = DBSCAN(eps=eps, min_samples=min_samples).fit(matrix).labels_
    groups: dict[int, list[FailedEpisode]] = {}
    for label, episode in zip(labels, episodes, strict=True):
        if label >= 0:
            groups.setdefault(int(label), []).append(episode)
    ordered = sorted(groups.values(), key=len, reverse=True)
    out = []
    for index, members in enumerate(ordered):
        dominant = Counter(m.primary.type for m in members).most_common(1)[0][0]
        out.append(FailureCluster(f"k{index + 1}", dominant, members))
    return out
