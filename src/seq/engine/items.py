"""The engine's unit of work: `WorkItem` (a condition, a trial, an arm, a stable id) and `item_id`
(kept in `seq.record.work`: the store records them)."""

from seq.record.work import WorkItem, item_id

__all__ = ["WorkItem", "item_id"]
