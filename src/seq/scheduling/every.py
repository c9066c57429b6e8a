"""`--every`: daily, weekly, hourly, deploy, or a cron expression, and when each fires.

The times are croniter's (a well-kept cron library, not a parser of ours), in this machine's local
time zone. A cron expression has five fields (minute hour day month weekday) and may have
croniter's sixth, seconds (`* * * * * */10`: every ten seconds).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from seq.errors import SeqInputError

DEPLOY = "deploy"
NEVER = "never fires"  # the next run of a cron expression no date matches any more
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


def check_fires(every: str) -> str:
    """`every` (as `check_every` stores it), refused in one sentence when it is a cron expression
    no date from now on matches (February 31, a year gone by): such a schedule would never run."""
    if every != DEPLOY and next_fire(every, time.time()) is None:
        raise SeqInputError(
            f"--every {every!r}: no date from now on matches this cron expression (such as "
            "February 30 or a past year), so the schedule would never run."
        )
    return every


def _local(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp).astimezone()


def _next(times: Any) -> float | None:
    """The next time of croniter's iterator `times`; None when no date matches any more."""
    from croniter import CroniterBadDateError

    try:
        return float(times.get_next(float))
    except CroniterBadDateError:  # no date matches (croniter looks some years ahead, then gives up)
        return None


def next_fire(every: str, after: float) -> float | None:
    """The first time strictly after `after` at which `every` (not `deploy`) fires; None when it
    never fires again (a schedule of an older seq could hold such an expression)."""
    return _next(_croniter()(NAMED.get(every, every), _local(after)))


def due_fire(every: str, anchor: float, now: float) -> tuple[float, int] | None:
    """The latest fire in (`anchor`, `now`] and how many fires that interval holds (counted up to
    `MISSED_COUNTED`); None when none fell due. Missed fires are run once, as this one."""
    times = _croniter()(NAMED.get(every, every), _local(anchor))
    latest, count = None, 0
    while count < MISSED_COUNTED:
        fire = _next(times)
        if fire is None or fire > now:
            break
        latest, count = fire, count + 1
    if count == MISSED_COUNTED:  # too many to count: the last one is the latest before now
        latest = float(_croniter()(NAMED.get(every, every), _local(now)).get_prev(float))
    return None if latest is None else (latest, count)
