"""The progress of an eval: a live bar on a terminal, plain lines in a log.

On a terminal, a rich bar shows the episodes done of the total and the success rate so far. Where
output is not a terminal (CI, `nohup`, a pipe) a bar draws nothing, so lines are written to stderr
instead, every tenth of the eval or every 30 seconds, whichever comes first: episodes done of the
total, success so far with its interval (clustered by condition, as the report's; an eval of
several arms shows each arm's success, `A` the first), elapsed time and an estimate of what is
left, each line within 80 columns. `seq grid run`, `seq evolve run` and `seq scheduler run` feed the
same lines from the evals they run, one eval after another.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from seq.record.episode import ERROR, EpisodeResult
from seq.record.store import EvalRow, Store

LINE_EVERY_S = 30.0  # a log line at least this often while episodes finish
LINE_EVERY_SHARE = 0.1  # and one each tenth of the eval
LINE_WIDTH = 80


def duration_text(seconds: float) -> str:
    """`42 s`, `3 min 5 s`, `1 h 02 min`."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def arm_labels(names: list[str]) -> dict[str, str]:
    """Each arm's short label in a progress line: A, B, … in the eval's order (A: the policy the
    others are compared against), then arm27, arm28, …"""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return {name: letters[i] if i < len(letters) else f"arm{i + 1}" for i, name in enumerate(names)}


class ProgressLog:
    """Plain progress lines for a log: at most one each `LINE_EVERY_SHARE` of the work or
    `LINE_EVERY_S`, whichever comes first, each one whole."""

    def __init__(self, name: str, total: int, done: int = 0, stream: TextIO | None = None) -> None:
        self.name, self.total, self.stream = name, total, stream or sys.stderr
        self.started = time.monotonic()
        self.first_done = done  # those recorded before this run: not part of its pace
        self.last_line = self.started
        self.next_share = self._share_after(done)

    def _share_after(self, done: int) -> int:
        step = max(1, round(self.total * LINE_EVERY_SHARE))
        return (done // step + 1) * step

    def update(self, done: int, summary: str) -> None:
        """Write a line when `done` reached the next tenth or the last line is 30 s old. A line
        too long for 80 columns leaves out the time left, then the summary."""
        now = time.monotonic()
        if done < self.next_share and now - self.last_line < LINE_EVERY_S and done < self.total:
            return
        self.next_share = self._share_after(done)
        self.last_line = now
        elapsed = now - self.started
        ran = done - self.first_done
        left = (self.total - done) * elapsed / ran if ran > 0 and done < self.total else None
        share = f" ({done / self.total:.0%})" if self.total else ""
        head, took = f"{self.name}: {done}/{self.total}{share}", duration_text(elapsed)
        lines = [f"{head} · {summary} · {took}", f"{head} · {took}"]
        if left is not None:
            lines.insert(0, f"{lines[0]}, ~{duration_text(left)} left")
        fitting = [line for line in lines if len(line) <= LINE_WIDTH]
        print(fitting[0] if fitting else lines[-1], file=self.stream, flush=True)


class EvalProgress:
    """Context manager wiring `seq.eval.run`'s callbacks to a progress bar on a terminal, or to
    plain lines on stderr where output is not one; each eval started counts afresh."""

    def __init__(
        self,
        console: Console,
        store: Store,
        rerun_failed: bool = False,
        announce: bool = True,
        bar: bool = True,
    ) -> None:
        """`rerun_failed`: the errored episodes already recorded run again (they are not done).
        `announce`: print the eval's line as it starts (a command that names its evals itself
        says no). `bar`: draw a bar on a terminal (a command printing its own lines there says no:
        it gets lines only where output is not a terminal)."""
        self.console = console
        self.store = store
        self.rerun_failed = rerun_failed
        self.announce = announce
        self.bar = bar
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.task: Any = None
        self.log: ProgressLog | None = None  # where output is not a terminal
        self.shown = False  # the bar appears once the eval starts: a refused one prints nothing
        self.successes = self.counted = self.errors = self.cut_short = 0
        self.outcomes: list[tuple[float, str, str]] = []  # success, condition, task: for the interval
        self.arm_labels: dict[str, str] = {}  # arm → A, B, …: where the eval has several arms
        self.arm_outcomes: dict[str, list[float]] = {}

    def __enter__(self) -> EvalProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.shown:
            self.progress.__exit__(*exc)

    def on_start(self, row: EvalRow) -> None:
        if self.announce:
            self.console.print(
                f"eval {row.id}: {row.benchmark}@v{row.benchmark_version} + "
                + (f"{adapter.label} + " if (adapter := row.manifest.adapter) else "")
                + f"{row.policy}@v{row.policy_version}",
                highlight=False,
            )
        self.successes = self.counted = self.errors = self.cut_short = 0
        self.outcomes = []
        names = row.manifest.arm_names
        self.arm_labels = arm_labels(names) if len(names) > 1 else {}
        self.arm_outcomes = {name: [] for name in self.arm_labels}
        if self.task is not None:  # the previous eval's bar
            self.progress.remove_task(self.task)
            self.task = None
        total = self.store.count_items(row.id)
        for result in self.store.episodes(row.id):
            if not (self.rerun_failed and result.status == ERROR):
                self._count(result)
        if not self.console.is_terminal:
            self.log = ProgressLog(row.id, total, self._done)
            return
        if not self.bar:
            return
        if not self.shown:
            self.progress.__enter__()
        self.shown = True
        self.task = self.progress.add_task(row.id, total=total, completed=self._done, rate=self._rate())

    @property
    def _done(self) -> int:
        return self.counted + self.errors + self.cut_short

    def _count(self, result: EpisodeResult) -> None:
        if result.infrastructure:  # no result: the eval will say which and why
            self.cut_short += 1
            return
        if result.status == ERROR:
            self.errors += 1
            return
        self.counted += 1
        success = float(result.metrics.get("success", 0.0) >= 1.0)
        self.successes += int(success)
        self.outcomes.append((success, f"{result.arm}/{result.condition_key}", result.task))
        self.arm_outcomes.setdefault(result.arm, []).append(success)

    def _arm_rates(self, percent: bool) -> str:
        """`A 1.00, B 0.50`: each arm's success so far (`A —` before its first episode)."""
        parts = []
        for name, label in self.arm_labels.items():
            values = self.arm_outcomes.get(name) or []
            rate = sum(values) / len(values) if values else None
            shown = "—" if rate is None else f"{rate:.0%}" if percent else f"{rate:.2f}"
            parts.append(f"{label} {shown}")
        return ", ".join(parts)

    def _rate(self) -> str:
        if self.arm_labels:  # arms are not pooled: each has its own rate
            rate = f"success {self._arm_rates(percent=True)}" + (
                f" of {self.counted}" if self.counted else ""
            )
        elif self.counted:
            rate = f"success {self.successes / self.counted:.0%} of {self.counted}"
        else:
            rate = "success —"
        rate += f", {self.errors} error(s)" if self.errors else ""
        return rate + (f", {self.cut_short} cut short (infrastructure)" if self.cut_short else "")

    def _interval_text(self) -> str:
        """Success so far with its 95% interval, clustered by condition as the report's."""
        if not self.counted:
            return "success —"
        if self.arm_labels:  # one interval per arm would not fit a line: each arm's rate
            text = f"success {self._arm_rates(percent=False)}"
            text += f", {self.errors} errored" if self.errors else ""
            return text + (f", {self.cut_short} cut short" if self.cut_short else "")
        from seq.stats import clustered_interval

        values, clusters, tasks = zip(*self.outcomes, strict=True)
        interval = clustered_interval(values, clusters, tasks, kind="rate")
        text = f"success {interval.mean:.2f} [{interval.low:.2f}, {interval.high:.2f}]"
        text += f", {self.errors} errored" if self.errors else ""
        return text + (f", {self.cut_short} cut short" if self.cut_short else "")

    def on_result(self, result: EpisodeResult) -> None:
        self._count(result)
        if self.log is not None:
            self.log.update(self._done, self._interval_text())
        elif self.task is not None:
            self.progress.update(self.task, advance=1, rate=self._rate())
