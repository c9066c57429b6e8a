"""Scheduled evals in the record: each schedule (`schedules`) and each time one fired
(`schedule_runs`), read and written through a `Store`.

A fire is claimed by a compare-and-set on the schedule's row (`claim_time`, `claim_version`), so
two scheduler processes on one record (a timer's `--once` beside a foreground `run`) never run
the same fire twice.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from seq.record.schema import COLUMNS, insert, select
from seq.record.store import Store

# What became of one fire of a schedule.
RUN_RUNNING = "running"
RUN_BUDGET = "stopped at budget"  # the eval ran until the schedule's core-hours were spent
RUN_SKIPPED = "skipped"  # not run: the budget was spent before it started
RUN_REFUSED = "refused"  # not run: the eval was refused (a policy or benchmark gone, bad options)


@dataclass(frozen=True)
class ScheduleRow:
    """One schedule: what to evaluate, when (`every`), and within what budget."""

    id: int
    policy: str
    benchmark: str
    every: str
    trials: int
    max_core_hours: float | None
    options: dict[str, Any]
    enabled: bool
    created_at: float
    anchor_at: float  # a time schedule fires next after this moment (the last fire, or its start)
    seen_version: int | None  # `--every deploy`: the policy's latest version already evaluated

    @property
    def label(self) -> str:
        return f"#{self.id} {self.policy} on {self.benchmark}"


@dataclass(frozen=True)
class ScheduleRun:
    """One fire of a schedule: when it was due, how many fires it stands for, and its eval."""

    schedule_id: int
    started_at: float
    due_at: float
    missed: int  # fires that fell due while no scheduler ran, folded into this one
    cause: str  # "time" or "deploy"
    policy_version: int | None
    eval_id: str | None
    status: str
    core_s: float
    finished_at: float | None
    note: str | None


def _schedule(row: sqlite3.Row) -> ScheduleRow:
    values = dict(row)
    values["options"] = json.loads(values["options"])
    values["enabled"] = bool(values["enabled"])
    return ScheduleRow(**values)


class Schedules:
    """The schedules of one record."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._db = store._db

    def put(
        self,
        policy: str,
        benchmark: str,
        every: str,
        trials: int,
        max_core_hours: float | None,
        options: dict[str, Any],
        now: float,
        seen_version: int | None,
    ) -> ScheduleRow:
        """Create the schedule, or update and switch on the one with the same policy, benchmark
        and `every`. One switched on again starts afresh: the time it was off is not owed."""
        with self.store.transaction() as db:
            found = db.execute(
                select("schedules") + " WHERE policy=? AND benchmark=? AND every=?",
                (policy, benchmark, every),
            ).fetchone()
            if found is None:
                db.execute(
                    insert("schedules", _GIVEN),
                    (policy, benchmark, every, trials, max_core_hours, json.dumps(options), 1, now, now,
                     seen_version),
                )  # fmt: skip
            else:
                restart = not found["enabled"]
                db.execute(
                    "UPDATE schedules SET trials=?, max_core_hours=?, options=?, enabled=1, "
                    "anchor_at=?, seen_version=? WHERE id=?",
                    (
                        trials,
                        max_core_hours,
                        json.dumps(options),
                        now if restart else found["anchor_at"],
                        seen_version if restart else found["seen_version"],
                        found["id"],
                    ),
                )
        return self.find(policy, benchmark, every)[0]

    def find(
        self, policy: str | None = None, benchmark: str | None = None, every: str | None = None
    ) -> list[ScheduleRow]:
        """Schedules, oldest first, narrowed to those matching each given field."""
        clauses, args = [], []
        for column, value in (("policy", policy), ("benchmark", benchmark), ("every", every)):
            if value is not None:
                clauses.append(f"{column}=?")
                args.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(select("schedules") + where + " ORDER BY id", args).fetchall()
        return [_schedule(row) for row in rows]

    def get(self, schedule_id: int) -> ScheduleRow | None:
        row = self._db.execute(select("schedules") + " WHERE id=?", (schedule_id,)).fetchone()
        return _schedule(row) if row else None

    def set_enabled(self, schedule_ids: list[int], enabled: bool) -> None:
        with self.store.transaction() as db:
            db.executemany(
                "UPDATE schedules SET enabled=? WHERE id=?", [(int(enabled), i) for i in schedule_ids]
            )

    def claim_time(self, schedule_id: int, anchor_at: float, now: float) -> bool:
        """Take the fire due since `anchor_at` (moving the anchor to `now`); False when another
        scheduler took it first."""
        cursor = self._db.execute(
            "UPDATE schedules SET anchor_at=? WHERE id=? AND anchor_at=? AND enabled=1",
            (now, schedule_id, anchor_at),
        )
        return cursor.rowcount == 1

    def claim_version(self, schedule_id: int, seen: int | None, latest: int) -> bool:
        """Take the fire of a newly deployed version `latest`; False when another scheduler did."""
        cursor = self._db.execute(
            "UPDATE schedules SET seen_version=? WHERE id=? AND seen_version IS ? AND enabled=1",
            (latest, schedule_id, seen),
        )
        return cursor.rowcount == 1

    def start_run(self, run: ScheduleRun) -> None:
        self._db.execute(insert("schedule_runs"), _values(run))

    def finish_run(self, run: ScheduleRun) -> None:
        """Write a run's outcome over its row (the key is the schedule and `started_at`)."""
        self._db.execute(insert("schedule_runs", verb="INSERT OR REPLACE"), _values(run))

    def runs(self, schedule_id: int | None = None) -> list[ScheduleRun]:
        """Runs, oldest first (of one schedule, or of all)."""
        where, args = (" WHERE schedule_id=?", (schedule_id,)) if schedule_id is not None else ("", ())
        rows = self._db.execute(select("schedule_runs") + where + " ORDER BY started_at", args).fetchall()
        return [ScheduleRun(**dict(row)) for row in rows]

    def spent_core_s(self, schedule_id: int) -> float:
        """Core-seconds the schedule's evals have used, kept after an eval is removed."""
        row = self._db.execute(
            "SELECT COALESCE(SUM(core_s), 0) FROM schedule_runs WHERE schedule_id=?", (schedule_id,)
        ).fetchone()
        return float(row[0])


_GIVEN = tuple(name for name in COLUMNS["schedules"] if name != "id")  # the id is SQLite's


def _values(run: ScheduleRun) -> tuple[Any, ...]:
    return (
        run.schedule_id,
        run.started_at,
        run.due_at,
        run.missed,
        run.cause,
        run.policy_version,
        run.eval_id,
        run.status,
        run.core_s,
        run.finished_at,
        run.note,
    )
