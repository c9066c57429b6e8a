"""The HTML view of a `Report`: one self-contained file (inline CSS and SVG plots, no script, no
network), and the same body as a fragment for the console's eval page.

It draws the tables the Markdown view draws (`seq.report.table_views`), its lines of prose
(`seq.report.text`), and the plots of `seq.report.charts`. Links to episodes and recordings are
the caller's: a file on disk links to the mp4 files themselves, the console to its own pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.states import EpisodeStatus
from seq.report import text as prose
from seq.report.charts import report_plots
from seq.report.report_content import ReportContent
from seq.report.table_views import KIND_TITLES, across_tasks_table, comparison_table, group_tables

WHERE_LISTED = 30  # episodes named under an error group; the rest are counted
Href = Callable[[EpisodeResult], "str | None"]


def file_video_href(episode: EpisodeResult) -> str | None:
    """A recording's own file, as a `file://` link (the HTML file opened where it was written)."""
    video = episode.artifacts.get("video")
    return Path(video).resolve().as_uri() if video else None


@dataclass(frozen=True)
class Links:
    """Where an episode (`episode`) and its recording (`video`) are linked to; None: not linked."""

    episode: Href = lambda episode: None  # noqa: E731
    video: Href = file_video_href


def outcome(episode: EpisodeResult) -> str:
    """`success`, `fail`, `error`, `timed_out` or `done` (no success metric): a link's class."""
    if episode.status != EpisodeStatus.OK:
        return episode.status
    success = episode.metrics.get("success")
    return "done" if success is None else ("success" if success >= 0.5 else "fail")


def recordings(report: ReportContent, links: Links) -> list[tuple[str, list[dict[str, Any]]]]:
    """The recorded episodes, grouped by task: label, link and outcome of each."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for episode in report.episodes:
        href = links.video(episode) if episode.artifacts.get("video") else None
        if href:
            arm = f" {episode.arm}" if episode.arm else ""
            trial = f" t{episode.trial}" if episode.trial else ""
            label = f"s{episode.seed}{trial}{arm}"
            by_task.setdefault(episode.task, []).append(
                {"label": label, "href": href, "outcome": outcome(episode)}
            )
    return list(by_task.items())


def _problem_groups(report: ReportContent, links: Links) -> list[dict[str, Any]]:
    by_item = {(e.item_id, e.arm): e for e in report.episodes}
    groups = []
    for group in report.problem_groups:
        where = []
        for problem in [p for p in report.problems if (p.status, p.summary) == (group.status, group.summary)]:
            episode = by_item.get((problem.where, problem.arm))
            href = links.episode(episode) if episode is not None else None
            where.append({"text": problem.location, "href": href})
        groups.append(
            {
                "label": group.label,
                "headline": group.headline,
                "detail": group.detail,
                "where": where[:WHERE_LISTED],
                "more": max(0, len(where) - WHERE_LISTED),
            }
        )
    return groups


def html_context(report: ReportContent, links: Links | None = None, draw: bool = True) -> dict[str, Any]:
    """What the report's HTML body shows, for `templates/report_body.html`. `draw`: plots as SVG
    drawn here; else as Vega-Lite specs for a page that draws them in the browser (the console)."""
    links = links or Links()
    tables = group_tables(report, list(KIND_TITLES))
    extra = [comparison_table(report, every_task_metric=True), across_tasks_table(report)]
    return {
        "report": report,
        "partial": prose.partial_line(report),
        "unfinished": prose.unfinished_lines(report),
        "rerun": prose.rerun_line(report),
        "sequential": prose.sequential_line(report),
        "charts": report_plots(report, draw),
        "tables": tables + [view for view in extra if view is not None],
        "methods": prose.methods_lines(report),
        "problems": _problem_groups(report, links),
        "adapter": prose.adapter_lines(report),
        "cost": prose.cost_line(report),
        "manifest": prose.manifest_lines(report),
        "recordings": recordings(report, links),
    }


HTML_MODULES = {"jinja2": "jinja2", "altair": "altair", "vl_convert": "vl-convert-python"}


def require_html(flag: str = "--html") -> None:
    """Refuse `flag` in one sentence, before anything runs, where this Python cannot write the HTML
    report: it needs jinja2, altair and vl-convert-python (the `console` extra)."""
    import importlib

    missing = []
    for module, package in HTML_MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise SeqInputError(
            f"{flag}: the HTML report needs {', '.join(missing)}, not installed here: "
            "pip install 'seq[console]'."
        )


def template_environment(*packages: str) -> Any:
    """A jinja2 environment over the templates of `packages` (first found wins) and the report's
    own (autoescaped); without jinja2, a sentence naming the extra to install."""
    try:
        import jinja2
    except ImportError:
        raise SeqInputError("the HTML report needs jinja2: pip install 'seq[console]'.") from None
    loaders = [jinja2.PackageLoader(package, "templates") for package in (*packages, "seq.report")]
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(report: ReportContent, links: Links | None = None) -> str:
    """The whole report as one self-contained HTML document."""
    template = template_environment().get_template("report.html")
    return template.render(**html_context(report, links))


def write_html(report: ReportContent, path: str | Path) -> Path:
    """Write the HTML report to `path`; its recordings are linked as files."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(report), encoding="utf-8")
    return target
