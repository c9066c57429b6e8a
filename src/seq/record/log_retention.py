"""How long an eval's logs (`seq.record.logs`) are kept: `SEQ_LOG_RETENTION_DAYS` days (7 by
default) after their stream ended. `Store.prune_logs` deletes older ones whenever the record is
opened, and for `seq eval prune-logs`; a running eval's are kept."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from seq.errors import SeqInputError
from seq.record.paths import LOGS, eval_folder, is_eval_id, unlink_inside

RETENTION_VARIABLE = "SEQ_LOG_RETENTION_DAYS"
DEFAULT_RETENTION_DAYS = 7.0
DAY_S = 86400.0


def retention_days() -> float:
    """How many days logs are kept after their stream ended: `$SEQ_LOG_RETENTION_DAYS`, else 7."""
    text = os.environ.get(RETENTION_VARIABLE)
    if not text:
        return DEFAULT_RETENTION_DAYS
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not days >= 0:
        raise SeqInputError(f"{RETENTION_VARIABLE}={text}: expected a number of days, 0 or more.")
    return days


def expired_streams(
    db: sqlite3.Connection, days: float | None = None, now: float | None = None
) -> list[tuple[str, str, str]]:
    """`(eval id, stream, path)` of each stream that ended more than `days` days ago (default:
    `retention_days()`), a running eval's left out."""
    days = retention_days() if days is None else days
    if days < 0:
        raise SeqInputError(f"--days {days}: expected a number of days, 0 or more.")
    cutoff = (time.time() if now is None else now) - days * DAY_S
    rows = db.execute(
        "SELECT l.eval_id, l.stream, l.path FROM logs l LEFT JOIN evals e ON e.id = l.eval_id "
        "WHERE COALESCE(l.ended_at, l.started_at) < ? AND COALESCE(e.status, '') != 'running'",
        (cutoff,),
    ).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


def remove_log_files(streams: list[tuple[str, str, str]], home: Path) -> None:
    """Delete the files of `streams` (rows of the record in `home`), and each eval's logs folder
    left empty; a row that names no folder of this record's deletes nothing."""
    for eval_id, _, path in streams:
        if not is_eval_id(eval_id):
            continue
        folder = eval_folder(home, LOGS, eval_id)
        unlink_inside(Path(path), folder)
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()
