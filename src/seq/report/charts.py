"""The report's plots as Vega-Lite (built with altair), drawn to static SVG by vl-convert.

SVG needs no script and no network: the HTML report and the console embed it inline, so a page
works offline and a 10,000-episode eval's file stays small. Both libraries are the `console`
extra; `svg` names the extra when they are missing.
"""

from __future__ import annotations

import functools
import html
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.report.labels import LABEL_CHARS, distinct_labels
from seq.report.report_content import ReportContent

ROW_STEP = 14  # pixels per group (task, suite) on a plot's y axis
LABEL_LIMIT = 7 * LABEL_CHARS  # pixels an axis label may take: every `distinct_labels` label whole
OVERALL = "overall"


def require_plotting() -> Any:
    """altair, or a sentence naming the extra that brings it and vl-convert."""
    try:
        import altair
        import vl_convert  # noqa: F401
    except ImportError as missing:
        raise SeqInputError(
            f"plots need altair and vl-convert-python ({missing.name} is not installed): "
            "pip install 'seq[console]'."
        ) from None
    return altair


@functools.lru_cache(maxsize=256)
def _svg(spec_json: str) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(json.loads(spec_json))


def svg(spec: dict[str, Any], labels: tuple[tuple[str, str], ...] = ()) -> str:
    """A Vega-Lite spec as an inline `<svg>` element; the same spec is drawn once per process.
    `labels` (short, whole) give each abbreviated axis label its whole name on hover."""
    text = _svg(json.dumps(spec, sort_keys=True))
    text = text[text.index("<svg") :]  # no XML prolog inside HTML
    for short, whole in labels:
        shown = f">{html.escape(short, quote=False)}</text>"
        text = text.replace(
            shown, f">{html.escape(short, quote=False)}<title>{html.escape(whole)}</title></text>"
        )
    return text


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (~0.9 MB, no imports): what draws the specs
    in a browser (the console), where the file report has its SVG drawn in Python. Bundling takes
    seconds, so the script is kept in the user's cache folder, one file per vl-convert version."""
    from importlib.metadata import version

    import vl_convert

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "seq"
    path = cache / f"vega-bundle-{version('vl-convert-python')}.js"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    # its stub marks the snippet required; without one the bundle defines vegaEmbed, vegaLite, vega
    bundle = vl_convert.javascript_bundle()  # type: ignore[call-arg]
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(bundle, encoding="utf-8")
        partial.replace(path)  # whole or absent: another process may be reading it
    except OSError:
        pass  # a cache that cannot be written is only slower
    return bundle


def primary_metric(report: ReportContent) -> str | None:
    """The metric the report compares and aggregates: the benchmark's first own metric."""
    if report.comparisons:
        return report.comparisons[0].comparison.metric
    for group in report.groups:
        for metric in group.metrics:
            return metric.name
    return None


def _arm(report: ReportContent, arm: str) -> str:
    return arm or "policy"


def _arms(report: ReportContent) -> list[str]:
    return [_arm(report, arm) for arm in report.arms] or ["policy"]


def group_labels(report: ReportContent) -> dict[str, str]:
    """Each task's and suite's label on the plots: its name, or a distinct abbreviation of it."""
    return distinct_labels(group.name for group in report.groups if group.kind != OVERALL)


def interval_rows(report: ReportContent, kind: str) -> list[dict[str, Any]]:
    """Each metric of each group of `kind` with its interval, one dict per (metric, group, arm):
    `group` is its label on the plot (`group_labels`), `name` its whole name."""
    labels = group_labels(report)
    return [
        {
            "metric": metric.name,
            "group": labels.get(group.name, group.name),
            "name": group.name,
            "arm": _arm(report, group.arm),
            "value": metric.value,
            "low": metric.low if metric.low is not None else metric.value,
            "high": metric.high if metric.high is not None else metric.value,
        }
        for group in report.groups
        if group.kind == kind
        for metric in group.metrics
        if metric.value == metric.value  # NaN: nothing to draw
    ]


def _interval_layers(
    alt: Any, rows: list[dict[str, Any]], y: str, title: str, arms: list[str], legend: str = "arm"
) -> Any:
    """Points with interval rules, one row per `y`, one colour per arm (the report's order, so an
    arm has one colour in every plot)."""
    base = alt.Chart(alt.Data(values=rows))
    encode = {
        "y": alt.Y(f"{y}:N", title=title, sort=None, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
        "yOffset": alt.YOffset("arm:N", sort=arms),
        "color": alt.Color("arm:N", title=legend, scale=alt.Scale(domain=arms)),
    }
    shown = ["name:N"] if rows and "name" in rows[0] else [f"{y}:N"]  # the whole name on hover
    tooltip = [*shown, "arm:N", "value:Q", "low:Q", "high:Q"]
    rules = base.mark_rule().encode(x=alt.X("low:Q", title=None), x2="high:Q", **encode)
    points = base.mark_point(filled=True, size=30).encode(x="value:Q", tooltip=tooltip, **encode)
    return rules + points


def metric_chart(report: ReportContent, kind: str) -> Any | None:
    """Every metric per task (or suite): its value and 95% interval, one panel per metric."""
    alt = require_plotting()
    rows = interval_rows(report, kind)
    if not rows:
        return None
    layers = _interval_layers(alt, rows, "group", kind, _arms(report))
    groups = len({row["group"] for row in rows})
    metrics = list(dict.fromkeys(row["metric"] for row in rows))  # the tables' order
    return (
        layers.properties(width=220, height=max(40, ROW_STEP * groups))
        .facet(facet=alt.Facet("metric:N", title=None, sort=metrics), columns=3)
        .resolve_scale(x="independent")
    )


def forest_rows(report: ReportContent, metric: str) -> list[dict[str, Any]]:
    """Each arm's paired difference B − A on `metric`, overall, per suite and per task."""
    labels = group_labels(report)
    rows = []
    for row in report.comparisons:
        c = row.comparison
        difference = c.difference
        if c.metric != metric or difference.difference != difference.difference:
            continue
        label = OVERALL if row.kind == OVERALL else f"{row.kind} {labels.get(row.name, row.name)}"
        rows.append(
            {
                "group": label,
                "name": OVERALL if row.kind == OVERALL else f"{row.kind} {row.name}",
                "arm": row.arm,
                "value": difference.difference,
                "low": difference.low,
                "high": difference.high,
                "verdict": c.verdict,
            }
        )
    return rows


def forest_chart(report: ReportContent) -> Any | None:
    """The forest plot: B − A per group with its interval, beside the equivalence band ±threshold."""
    alt = require_plotting()
    metric = primary_metric(report)
    rows = forest_rows(report, metric) if metric else []
    if not rows:
        return None
    threshold = report.comparisons[0].comparison.threshold
    groups = len({row["group"] for row in rows})
    layers = [alt.Chart(alt.Data(values=[{"zero": 0}])).mark_rule(color="#555").encode(x="zero:Q")]
    if threshold is not None:
        band = [{"from": -threshold, "to": threshold}]
        layers.insert(
            0,
            alt.Chart(alt.Data(values=band))
            .mark_rect(color="#8fbc8f", opacity=0.25)
            .encode(x=alt.X("from:Q", title=f"{metric}: B − A"), x2="to:Q"),
        )
    layers.append(_interval_layers(alt, rows, "group", "group", _arms(report)))
    title = f"{metric}: B − A per group, 95% interval" + (
        f"; band: equivalence margin ±{threshold}" if threshold is not None else ""
    )
    return alt.layer(*layers).properties(width=420, height=max(40, ROW_STEP * groups), title=title)


def heatmap_chart(report: ReportContent) -> Any | None:
    """Task × arm: the primary metric's value per cell."""
    alt = require_plotting()
    metric = primary_metric(report)
    rows = [row for row in interval_rows(report, "task") if row["metric"] == metric]
    if not rows:
        return None
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("arm:N", title="arm", sort=None),
        y=alt.Y("group:N", title="task", sort=None, axis=alt.Axis(labelLimit=LABEL_LIMIT)),
    )
    cells = base.mark_rect().encode(color=alt.Color("value:Q", title=metric), tooltip=["name:N", "value:Q"])
    labels = base.mark_text(fontSize=9).encode(text=alt.Text("value:Q", format=".2f"))
    tasks = len({row["group"] for row in rows})
    arms = len({row["arm"] for row in rows})
    return (cells + labels).properties(
        width=max(80, 70 * arms), height=max(40, ROW_STEP * tasks), title=f"{metric} per task and arm"
    )


def across_chart(report: ReportContent) -> Any | None:
    """Each arm's interquartile mean of per-task means with its interval (rliable)."""
    alt = require_plotting()
    if not report.across_tasks:
        return None
    rows = [
        {"group": "IQM", "arm": r["arm"], "value": r["iqm"], "low": r["iqm_low"], "high": r["iqm_high"]}
        for r in report.across_tasks
        if r["iqm"] is not None and r["iqm"] == r["iqm"]
    ]
    if not rows:
        return None
    metric = report.across_tasks[0]["metric"]
    return _interval_layers(alt, rows, "arm", "arm", _arms(report)).properties(
        width=420, height=max(40, ROW_STEP * len(rows)), title=f"{metric}: IQM across tasks, 95% interval"
    )


@dataclass(frozen=True)
class Plot:
    """A titled plot: its Vega-Lite spec, its SVG where drawn in Python, and the abbreviated
    labels it shows with their whole names (`(short, whole)`, for its legend)."""

    title: str
    spec: dict[str, Any]
    svg: str | None = None
    labels: tuple[tuple[str, str], ...] = ()


def report_plots(report: ReportContent, draw: bool = True) -> list[Plot]:
    """The report's plots in the order the HTML view shows them; `draw`: with their SVG."""
    charts = [
        ("Every metric per suite, 95% intervals", metric_chart(report, "suite")),
        ("Every metric per task, 95% intervals", metric_chart(report, "task")),
        ("Paired difference per group (forest plot)", forest_chart(report)),
        ("Task × arm", heatmap_chart(report) if len(report.arms) > 1 else None),
        ("Across tasks", across_chart(report)),
    ]
    # altair's schema check costs more than building the chart; vl-convert or vega draws them
    specs = [(title, chart.to_dict(validate=False)) for title, chart in charts if chart is not None]
    short = [(label, name) for name, label in group_labels(report).items() if label != name]
    plots = []
    for title, spec in specs:
        shown = json.dumps(spec)
        labels = tuple(pair for pair in short if json.dumps(pair[0])[1:-1] in shown)
        plots.append(Plot(title, spec, svg(spec, labels) if draw else None, labels))
    return plots


def interval_chart(
    rows: list[dict[str, Any]], y_title: str, arms: list[str], title: str, legend: str = "arm"
) -> Any:
    """Points with their interval rules, one row per `group`, one colour per `arm` (its legend
    titled `legend`), for rows of `{"group", "arm", "value", "low", "high"}` from outside a
    `Report` (`seq evolve report`)."""
    alt = require_plotting()
    groups = len({row["group"] for row in rows})
    return _interval_layers(alt, rows, "group", y_title, arms, legend).properties(
        width=320, height=max(40, ROW_STEP * 2 * groups), title=title
    )


def value_heatmap(
    rows: list[dict[str, Any]], x_title: str, y_title: str, value_title: str, title: str
) -> Any:
    """Rows of `{"x", "y", "value"}` as a heatmap, each cell labelled with its value (a rate)."""
    alt = require_plotting()
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("x:N", title=x_title, sort=None, axis=alt.Axis(labelAngle=-30, labelLimit=240)),
        y=alt.Y("y:N", title=y_title, sort=None),
    )
    scale = alt.Scale(domain=[0, 1], scheme="redyellowgreen")
    cells = base.mark_rect().encode(color=alt.Color("value:Q", title=value_title, scale=scale))
    labels = base.mark_text(fontSize=9).encode(text=alt.Text("value:Q", format=".0%"))
    columns = len({row["x"] for row in rows})
    ys = len({row["y"] for row in rows})
    return (cells + labels).properties(
        width=max(80, 60 * columns), height=max(40, 2 * ROW_STEP * ys), title=title
    )
