"""Statistics shared by every report: one module, built on scipy, each method named in the output."""

from seq.stats.intervals import (
    SMALL_N,
    Interval,
    bootstrap_interval,
    is_binary,
    metric_interval,
    wilson_interval,
)

__all__ = ["SMALL_N", "Interval", "bootstrap_interval", "is_binary", "metric_interval", "wilson_interval"]
