"""Each benchmark version's check at deploy, as the `checks` table keeps it.

A check is one short episode run where the benchmark runs (its image, else this environment):
what its image build and its own code printed (`output`, masked), what it measured (`figures`:
the observation's keys and shapes, the action space, seconds of setup and reset, milliseconds per
step, the frame it rendered) and the error that failed it, if one did.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from seq.record.episode import bounded_error
from seq.record.schema import insert, select

if TYPE_CHECKING:
    from seq.record.store import Store

READY, FAILED_CHECK, UNCHECKED = "ready", "failed check", "unchecked"


@dataclass(frozen=True)
class CheckRow:
    """One version's check: `status` ready, failed check, or unchecked (and why, in `error`)."""

    name: str
    version: int
    status: str
    output: str
    figures: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    checked_at: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.name}@v{self.version}"

    def to_dict(self) -> dict[str, Any]:
        keys = ("name", "version", "status", "output", "figures", "error", "checked_at")
        return {key: getattr(self, key) for key in keys}


def write_check(store: Store, check: CheckRow) -> None:
    """Keep a version's check, replacing an earlier one of the same version."""
    values = (
        check.name,
        check.version,
        check.status,
        check.output,
        json.dumps(check.figures),
        bounded_error(check.error),
        check.checked_at or time.time(),
    )
    store._db.execute(insert("checks", verb="INSERT OR REPLACE"), values)


def read_check(store: Store, name: str, version: int) -> CheckRow | None:
    """A version's check, if it was checked."""
    row = store._db.execute(select("checks") + " WHERE name=? AND version=?", (name, version)).fetchone()
    if row is None:
        return None
    return CheckRow(
        row["name"],
        row["version"],
        row["status"],
        row["output"],
        json.loads(row["figures"]),
        row["error"],
        row["checked_at"],
    )
