"""The unit of work an eval is made of: `WorkItem` (a condition, a trial, an arm, a stable id).

Its own module, apart from the store that keeps the items: a worker process runs items without
importing SQLite and the record's schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seq.authoring.conditions import Condition
from seq.record.episode import EpisodeResult, pair_key


@dataclass(frozen=True)
class WorkItem:
    """One episode to run: a condition, a trial number and an arm, with a stable id.

    `pair_key` is the id without the arm: the episodes of two arms with the same pair key ran the
    same condition, seed and trial, and so pair up in comparisons.
    """

    item_id: str
    ordinal: int
    condition: Condition
    trial: int
    arm: str = ""
    attempt: int = 1  # the number its next episode row gets (its item's earlier ones are kept)

    @property
    def pair_key(self) -> str:
        return pair_key(self.item_id, self.arm)

    def result(self, **fields: Any) -> EpisodeResult:
        """An `EpisodeResult` for this item, with the given fields set."""
        c = self.condition
        return EpisodeResult(
            self.item_id,
            c.task,
            c.seed,
            self.trial,
            c.suite,
            c.variation,
            arm=self.arm,
            attempt=self.attempt,
            **fields,
        )


def item_id(condition: Condition, trial: int, trials: int, arm: str, arms: int) -> str:
    """`[arm/]task|…|seed=S[|trial=T]`: readable, stable, unique within an eval."""
    key = condition.key + (f"|trial={trial}" if trials > 1 else "")
    return f"{arm}/{key}" if arms > 1 else key
