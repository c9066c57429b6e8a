"""The engine's unit of work: `WorkItem` (a condition, a trial, an arm, a stable id) and `item_id`."""

from seq.record.store import WorkItem, item_id

__all__ = ["WorkItem", "item_id"]
