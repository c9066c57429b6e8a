"""The report's tables as text cells: what the terminal and Markdown views both draw.

Every paired row and every across-tasks row names the method of its interval and test.
"""

from __future__ import annotations

from dataclasses import dataclass

from seq.report.report_content import ReportContent
from seq.report.rows import GroupRow, MetricRow
from seq.stats import SMALL_N
from seq.stats.intervals import CLUSTERED

KIND_TITLES = {"overall": "Overall", "suite": "Per suite", "task": "Per task"}
METHOD_NAMES = {
    "wilson": "Wilson score",
    "bootstrap-bca": "BCa bootstrap",
    "bootstrap-percentile": "percentile bootstrap (BCa degenerate)",
    "bootstrap (all values equal)": "zero width (every value equal)",
    "paired-bootstrap (all values equal)": "zero width (every difference equal)",
    "score hook": "value from @seq.score (replaces the mean; no interval)",
    "none (n=1)": "no interval (n=1)",
    "tango": "Tango score",
    "agresti-min": "Agresti–Min",
    "paired-bootstrap-bca": "paired BCa bootstrap",
    "paired-bootstrap-percentile": "paired percentile bootstrap",
    "paired-t": "paired Student t",
    "paired-t (all differences equal)": "zero width (every difference equal)",
    "none (fewer than 2 pairs)": "no interval (fewer than 2 pairs)",
    "repeated-ci-tango": "repeated Tango score",
    "mcnemar-exact": "McNemar exact",
    "iqm-stratified-bootstrap": "IQM, stratified bootstrap",
    "poi-stratified-bootstrap": "stratified bootstrap",
}
NAME_COLUMNS = ("arm", "group", "suite", "task", "metric")


def method_name(method: str) -> str:
    """A method's name as the report prints it: `tango` → `Tango score`; a clustered one says so:
    `wilson (clustered)` → `Wilson score at the effective n`."""
    if method.endswith(CLUSTERED):
        base = method[: -len(CLUSTERED)]
        return f"{METHOD_NAMES.get(base, base)} at the effective n"
    return METHOD_NAMES.get(method, method)


def number(value: float | None) -> str:
    """A value with the digits that matter: `1,234`, `12.3`, `0.12`; `—` for none."""
    if value is None or value != value:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def interval_text(value: float | None, low: float | None, high: float | None) -> str:
    """`0.98 [0.90, 1.00]`, or the bare value where there is no interval."""
    if low is None or high is None or low != low or high != high:
        return number(value)
    return f"{number(value)} [{number(low)}, {number(high)}]"


def format_metric(metric: MetricRow) -> str:
    """A metric's value with its interval, and the effective n the interval rests on where its
    episodes repeat conditions: `0.50 [0.30, 0.70] eff. n 20`."""
    text = interval_text(metric.value, metric.low, metric.high)
    if metric.clustered and metric.effective_n is not None:
        text += f" eff. n {metric.effective_n:.0f}"
    return text


@dataclass(frozen=True)
class TableView:
    """A titled table of text cells. The first `keys` columns say which row it is: a narrow
    terminal prints them as the row's heading and stacks the other columns under it."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    keys: int = 1


def _metric_names(report: ReportContent) -> list[str]:
    names: dict[str, None] = {}
    for group in report.groups:
        for metric in group.metrics:
            names.setdefault(metric.name)
    return list(names)


def _cells(group: GroupRow, names: list[str]) -> list[str]:
    by_name = {m.name: m for m in group.metrics}
    return [format_metric(by_name[n]) if n in by_name else "" for n in names]


def _n_cell(count: int) -> str:
    return f"{count}" + (" ⚠" if count < SMALL_N else "")


def group_tables(report: ReportContent, kinds: list[str]) -> list[TableView]:
    """One table per group kind (overall, per suite, per task), with an arm column when the eval has
    several arms."""
    names = _metric_names(report)
    several = len(report.arms) > 1
    tables = []
    for kind in kinds:
        rows = [g for g in report.groups if g.kind == kind]
        if rows:
            label = kind if kind != "overall" else "group"
            headers = (["arm"] if several else []) + [label, "n", *names]
            cells = [
                ([g.arm] if several else []) + [g.name, _n_cell(g.episodes - g.errors), *_cells(g, names)]
                for g in rows
            ]
            tables.append(TableView(KIND_TITLES[kind], headers, cells, keys=3 if several else 2))
    return tables


COMPARISON_HEADERS = [
    "arm",
    "group",
    "metric",
    "pairs",
    "A [95%]",
    "B [95%]",
    "both/A only/B only/neither",
    "B − A [95%]",
    "interval",
    "p",
    "verdict",
    "Agresti–Min [95%]",
]


def comparison_title(report: ReportContent) -> str:
    """What the paired table shows and what its verdict rests on."""
    from seq.stats import agreeing_pairs_needed

    baseline = report.comparisons[0].baseline
    threshold = report.comparisons[0].comparison.threshold
    if threshold is None:
        equivalence = "no 'within threshold' verdict: the eval holds no margin between 0 and 1"
    else:
        equivalence = (
            f"'within threshold': Tango's interval lies inside ±{threshold} (false equivalence at the "
            f"margin at most 2.5% for 20 to 200 pairs; with every pair agreeing that takes "
            f"{agreeing_pairs_needed('tango', threshold)} pairs). Agresti–Min [95%]: the "
            f"interval other tools report, shown and not used: it fits inside ±{threshold} from "
            f"{agreeing_pairs_needed('agresti-min', threshold)} agreeing pairs, but at ±0.05 it calls "
            "a real difference of 0.05 equivalent up to 14% of the time"
        )
    return (
        f"Paired comparisons against arm {baseline} (A): B − A with the interval each row names; "
        f"p: McNemar's exact test; {equivalence}"
    )


def comparison_table(report: ReportContent, every_task_metric: bool) -> TableView | None:
    """Each arm against the first, over paired episodes: each side, the paired table, B − A with
    its interval and method, the test, the verdict and the Agresti–Min interval (shown, not used). Per suite
    and task, only the first metric unless asked (`every_task_metric`)."""
    if not report.comparisons:
        return None
    first_metric = report.comparisons[0].comparison.metric
    rows = []
    for row in report.comparisons:
        c = row.comparison
        if row.kind != "overall" and not every_task_metric and c.metric != first_metric:
            continue
        table, difference, seed_interval = c.table, c.difference, c.agresti_min
        rows.append(
            [
                row.arm,
                f"{row.kind} {row.name}" if row.kind != "overall" else "all",
                c.metric,
                _n_cell(c.n),
                interval_text(c.rate_a.mean, c.rate_a.low, c.rate_a.high),
                interval_text(c.rate_b.mean, c.rate_b.low, c.rate_b.high),
                f"{table.both}/{table.only_a}/{table.only_b}/{table.neither}" if table else "—",
                interval_text(difference.difference, difference.low, difference.high),
                method_name(c.verdict_interval),
                "—" if c.p_value is None else f"{c.p_value:.3g} ({method_name(c.test or '')})",
                c.verdict,
                "—"
                if seed_interval is None
                else interval_text(seed_interval.difference, seed_interval.low, seed_interval.high),
            ]
        )
    return TableView(comparison_title(report), COMPARISON_HEADERS, rows, keys=4)


def across_tasks_table(report: ReportContent) -> TableView | None:
    """rliable's view: each arm's IQM of per-task means, and its probability of improvement over A,
    each with its method."""
    if not report.across_tasks:
        return None
    rows = []
    for row in report.across_tasks:
        improvement = (
            interval_text(row["probability_of_improvement"], row["poi_low"], row["poi_high"])
            if "probability_of_improvement" in row
            else "—"
        )
        methods = [method_name(row.get("method", "iqm-stratified-bootstrap"))]
        if "poi_method" in row:
            methods.append("P: " + method_name(row["poi_method"]))
        rows.append(
            [
                row["arm"],
                row["metric"],
                str(row["tasks"]),
                interval_text(row["iqm"], row["iqm_low"], row["iqm_high"]),
                improvement,
                "; ".join(methods),
            ]
        )
    title = (
        "Across tasks (Agarwal et al. 2021): interquartile mean of per-task means and P(arm > A), "
        "each with a stratified bootstrap 95% interval (percentile)"
    )
    headers = ["arm", "metric", "tasks", "IQM [95%]", "P(improvement) [95%]", "method"]
    return TableView(title, headers, rows, keys=3)
