"""The report of an eval: one object, built from the record, rendered as terminal, Markdown, JSON or
CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.store import Store
from seq.report.analysis import across_tasks, analyse, declared_kinds
from seq.report.recordings import unrecorded_note
from seq.report.report_content import ReportContent, summary_csv_path, unfinished_item
from seq.stats import usable_threshold

__all__ = ["Report", "build_report"]


class Report(ReportContent):
    """Everything `seq eval report` shows, and its views: `print`, `to_markdown`, `to_html`,
    `to_csv`, `to_json`. Every view renders this object and nothing else."""

    def to_markdown(self) -> str:
        from seq.report.views import render_markdown

        return render_markdown(self)

    def to_html(self, path: str | Path | None = None) -> str:
        """The report as one self-contained HTML document (plots as inline SVG, no script, no
        network; needs the `console` extra); written to `path` where given."""
        from seq.report.html import render_html

        text = render_html(self)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text, encoding="utf-8")
        return text

    def to_csv(self, path: str | Path) -> Path:
        """One row per episode at `path`; the report's rows (groups, paired comparisons, across
        tasks, each with its method) beside it, at `summary_csv_path(path)`."""
        from seq.report.csv_views import write_csv, write_summary_csv

        write_summary_csv(self, summary_csv_path(Path(path)))
        return write_csv(self, Path(path))

    def print(self, console: Any = None) -> None:
        """The report on the terminal, as `seq eval report` shows it."""
        from seq.report.terminal import print_report

        print_report(self, console)


def build_report(eval_id: str, store: Store | None = None) -> Report:
    """Read an eval's record and compute its report (intervals, groups, errors, cost, manifest)."""
    store = store or Store()
    row = store.find_eval(eval_id)  # the id, or a unique prefix of it
    if row is None:
        raise SeqInputError(f"no eval has id {eval_id!r} (seq eval ls lists them).")
    eval_id = row.id
    results = store.episodes(eval_id)
    arms = row.manifest.arm_names
    stored = row.arguments.threshold
    threshold = usable_threshold(stored)
    notes = (
        []
        if threshold is not None
        else [
            f"The eval's stored threshold {stored!r} is not between 0 and 1, so no difference is "
            "called within threshold."
        ]
    )
    unrecorded = unrecorded_note(results)  # videos asked for and not made: say why, once
    notes += [unrecorded] if unrecorded else []
    analysis = analyse(results, store.scores(eval_id), arms, threshold, declared_kinds(row.manifest))
    comparisons = analysis.comparisons
    aggregate = across_tasks(results, arms, comparisons[0].comparison.metric) if comparisons else []
    unfinished = [unfinished_item(item, last, row.status) for item, last in store.unfinished(eval_id)]
    if row.manifest.sequential is not None:  # the items the sequential test did not need are not owed
        unfinished = [entry for entry in unfinished if entry.attempts]
    cost = {
        "wall_s": row.wall_s,
        "core_s": sum(r.cpu_s for r in results) + row.setup_cpu_s,
        "episode_s": sum(r.duration_s for r in results),
    }
    return Report(
        eval_id=row.id,
        status=row.status,
        policy=f"{row.policy}@v{row.policy_version}",
        benchmark=f"{row.benchmark}@v{row.benchmark_version}",
        done=len(results),
        total=store.count_items(eval_id),
        groups=analysis.groups,
        problems=analysis.problems,
        cost=cost,
        manifest=row.manifest,
        arguments=row.arguments,
        episodes=results,
        arms=arms,
        comparisons=comparisons,
        across_tasks=aggregate,
        schema_version=store.schema_version,
        kinds=analysis.kinds,
        trials=analysis.trials,
        threshold=threshold,
        notes=notes,
        error=row.error,
        unfinished=unfinished,
        reruns=store.reruns(eval_id),
    )
