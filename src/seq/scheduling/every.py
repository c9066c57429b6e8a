"""`--every`: daily, weekly, hourly, deploy, or a cron expression, and when each fires.

The times are croniter's (a well-kept cron library, not a parser of ours), in this machine's local
time zone. A cron expression has five fields (minute hour day month weekday) and may have
croniter's sixth, seconds (`* * * * * */10`: every ten seconds).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from seq.errors import SeqInputError

DEPLOY = "deploy"
NAMED = {"hourly": "@hourly", "daily": "@daily", "weekly": "@weekly"}
MISSED_COUNTED = 10_000  # fires folded into one are counted up to this many


def _croniter() -> Any:
    try:
        from croniter import croniter
    except ImportError:  # the `schedule` extra
        raise SeqInputError(
            "scheduled evals need the croniter package: pip install 'seq[schedule]'."
        ) from None
    return croniter


def check_every(text: str) -> str:
    """`text` as stored: a name (daily, weekly, hourly, deploy) or a cron expression, refused in
    one sentence when it is neither."""
    every = " ".join(str(text).split())
    if every in NAMED or every == DEPLOY:
        return every
    if not every or not _croniter().is_valid(every):
        raise SeqInputError(
            f"--every {text!r}: expected daily, weekly, hourly, deploy or a cron expression such "
            "as '0 3 * * *' (minute hour day month weekday; an optional sixth field is seconds)."
        )
    return every


def _local(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp).astimezone()


def next_fire(every: str, after: float) -> float:
    """The first time strictly after `after` at which `every` (not `deploy`) fires."""
    return float(_croniter()(NAMED.get(every, every), _local(after)).get_next(float))


def due_fire(every: str, anchor: float, now: float) -> tuple[float, int] | None:
    """The latest fire in (`anchor`, `now`] and how many fires that interval holds (counted up to
    `MISSED_COUNTED`); None when none fell due. Missed fires are run once, as this one."""
    times = _croniter()(NAMED.get(every, every), _local(anchor))
    latest, count = None, 0
    while count < MISSED_COUNTED:
        fire = float(times.get_next(float))
        if fire > now:
            break
        latest, count = fire, count + 1
    if count == MISSED_COUNTED:  # too many to count: the last one is the latest before now
        latest = float(_croniter()(NAMED.get(every, every), _local(now)).get_prev(float))
    return None if latest is None else (latest, count)
