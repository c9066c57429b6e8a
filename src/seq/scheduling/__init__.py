"""Scheduled evals and trends, on top of the eval API and the record.

- `seq.schedule(policy, benchmark=, every=, trials=, max_core_hours=, off=)`: `seq eval schedule`
- `seq.schedules()`: `seq eval schedules`, each with its next run and last result
- `seq.run_scheduler(poll_s=, once=)`: `seq scheduler run`; `seq.run_due(now=)` looks once
- `seq.install_scheduler(kind=)`: `seq scheduler install` (a systemd user timer, or cron)
- `seq.trend(policy, benchmark, metric=)`: `seq eval trend`
"""

from seq.scheduling.book import schedule, schedules
from seq.scheduling.due import run_due, run_scheduler
from seq.scheduling.install import install_scheduler
from seq.scheduling.trend import Trend, trend

__all__ = ["Trend", "install_scheduler", "run_due", "run_scheduler", "schedule", "schedules", "trend"]
