"""The live progress bar of `seq eval run`: episodes done of the total and the success rate so far."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from seq.record.episode import ERROR, EpisodeResult
from seq.record.store import EvalRow, Store


class EvalProgress:
    """Context manager wiring `seq.eval.run`'s callbacks to a rich progress bar."""

    def __init__(self, console: Console, store: Store, rerun_failed: bool = False) -> None:
        """`rerun_failed`: the errored episodes already recorded run again (they are not done)."""
        self.console = console
        self.store = store
        self.rerun_failed = rerun_failed
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
        self.shown = False  # the bar appears once the eval starts: a refused one prints nothing
        self.successes = self.counted = self.errors = self.cut_short = 0

    def __enter__(self) -> EvalProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.shown:
            self.progress.__exit__(*exc)

    def on_start(self, row: EvalRow) -> None:
        self.console.print(
            f"eval {row.id}: {row.benchmark}@v{row.benchmark_version} + "
            + (f"{adapter.label} + " if (adapter := row.manifest.adapter) else "")
            + f"{row.policy}@v{row.policy_version}",
            highlight=False,
        )
        self.progress.__enter__()
        self.shown = True
        total = self.store.count_items(row.id)
        for result in self.store.episodes(row.id):
            if not (self.rerun_failed and result.status == ERROR):
                self._count(result)
        self.task = self.progress.add_task(
            row.id, total=total, completed=self.counted + self.errors, rate=self._rate()
        )

    def _count(self, result: EpisodeResult) -> None:
        if result.infrastructure:  # no result: the eval will say which and why
            self.cut_short += 1
            return
        if result.status == ERROR:
            self.errors += 1
            return
        self.counted += 1
        self.successes += result.metrics.get("success", 0.0) >= 1.0

    def _rate(self) -> str:
        rate = (
            f"success {self.successes / self.counted:.0%} of {self.counted}" if self.counted else "success —"
        )
        rate += f", {self.errors} error(s)" if self.errors else ""
        return rate + (f", {self.cut_short} cut short (infrastructure)" if self.cut_short else "")

    def on_result(self, result: EpisodeResult) -> None:
        self._count(result)
        self.progress.update(self.task, advance=1, rate=self._rate())
