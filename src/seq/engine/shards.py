"""Shards: several independent runner processes finishing one eval through its record.

`seq eval run … --eval-id ID --shard-id K --num-shards N` on N processes (one machine, or several
sharing a filesystem whose SQLite locking works): the first to arrive stores the eval and its work
items; every shard then claims items one at a time in a transaction — its own unfinished item
first (a shard rerun after a crash resumes), then its share (`ordinal % N == K`), then any item
nobody claimed. A shard whose first three episodes all error is unhealthy: it stops with exit
code 3, and with `--requeue-unhealthy` hands its items back to the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.store import Store, WorkItem

UNHEALTHY_AFTER = 3


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    requeue_unhealthy: bool = False

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise SeqInputError(
                f"--shard-id {self.index} --num-shards {self.count}: expected 0 <= shard-id < num-shards."
            )

    @property
    def name(self) -> str:
        return f"shard-{self.index}-of-{self.count}"


class ShardUnhealthy(RuntimeError):
    """The shard's first episodes all errored; it stopped (exit code 3)."""


class SharedQueue:
    """A `WorkSource` that claims items from the record, shared by every shard of the eval."""

    def __init__(self, store: Store, eval_id: str, shard: Shard) -> None:
        self.store, self.eval_id, self.shard = store, eval_id, shard
        self.taken: set[str] = set()

    def take(self, known_tasks: set[str], claimed: set[str]) -> WorkItem | None:
        item = self.store.claim_item(
            self.eval_id, self.shard.name, self.shard.index, self.shard.count, self.taken
        )
        if item is not None:
            self.taken.add(item.item_id)
        return item

    def __bool__(self) -> bool:
        return self.store.has_claimable(self.eval_id, self.shard.name, self.taken)

    def extend(self, items: list[WorkItem]) -> None:
        raise SeqInputError("a sharded eval cannot also run in sequential rounds.")


class HealthCheck:
    """Watches a shard's first episodes: all of the first three errored means the shard is broken."""

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def __call__(self, result: EpisodeResult) -> None:
        if len(self.seen) < UNHEALTHY_AFTER:
            self.seen.append(result.ok)
            if len(self.seen) == UNHEALTHY_AFTER and not any(self.seen):
                raise ShardUnhealthy(f"the shard's first {UNHEALTHY_AFTER} episodes all errored")
