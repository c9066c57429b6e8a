"""The console's own plots (the report's are `seq.report.charts`): an episode's actions and
rewards over its steps, and a benchmark's primary metric over its versions. Like the report's on
a console page, they are Vega-Lite specs the browser draws."""

from __future__ import annotations

from typing import Any

from seq.console.queries import EvalSummary
from seq.report.charts import Plot, require_plotting

MAX_DIMENSIONS = 16  # action dimensions drawn; a larger action is cut to its first ones


def _flat(action: Any) -> list[float]:
    if isinstance(action, (int, float)):
        return [float(action)]
    if isinstance(action, dict):
        return [v for value in action.values() for v in _flat(value)]
    if isinstance(action, (list, tuple)):
        return [v for value in action for v in _flat(value)]
    return []


def trajectory_plots(actions: list[Any], rewards: list[Any]) -> list[Plot]:
    """The actions (one line per dimension) and the rewards over steps."""
    alt = require_plotting()
    action_rows = [
        {"step": step, "dimension": f"a[{d}]", "value": value}
        for step, action in enumerate(actions, start=1)
        for d, value in enumerate(_flat(action)[:MAX_DIMENSIONS])
    ]
    reward_rows = [
        {"step": step, "reward": reward}
        for step, reward in enumerate(rewards, start=1)
        if isinstance(reward, (int, float))
    ]
    charts = []
    if action_rows:
        chart = (
            alt.Chart(alt.Data(values=action_rows))
            .mark_line()
            .encode(x="step:Q", y=alt.Y("value:Q", title="action"), color=alt.Color("dimension:N", sort=None))
            .properties(width=640, height=200)
        )
        charts.append(Plot("Actions over steps", chart.to_dict(validate=False)))
    if reward_rows:
        chart = (
            alt.Chart(alt.Data(values=reward_rows))
            .mark_line(point=len(reward_rows) < 60)
            .encode(x="step:Q", y="reward:Q")
            .properties(width=640, height=160)
        )
        charts.append(Plot("Reward over steps", chart.to_dict(validate=False)))
    return charts


def trend_plot(evals: list[EvalSummary]) -> Plot | None:
    """Each eval's primary metric (first arm) with its interval, in version order."""
    alt = require_plotting()
    rows = []
    for order, summary in enumerate(evals):
        figure = summary.figures[0] if summary.figures else None
        if figure is None or figure.value is None:
            continue
        rows.append(
            {
                "eval": f"{order + 1:03d} v{summary.benchmark_version} {summary.id[-6:]}",
                "version": f"v{summary.benchmark_version}",
                "value": figure.value,
                "low": figure.value if figure.low is None else figure.low,
                "high": figure.value if figure.high is None else figure.high,
                "policy": summary.policy,
            }
        )
    if not rows:
        return None
    metric = evals[0].metric or "metric"
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("eval:N", title="eval (in version order)", sort=None), color=alt.Color("version:N")
    )
    rules = base.mark_rule().encode(y=alt.Y("low:Q", title=metric), y2="high:Q")
    points = base.mark_point(filled=True, size=40).encode(y="value:Q", shape="policy:N")
    chart = (rules + points).properties(width=max(300, 18 * len(rows)), height=220)
    return Plot(f"{metric} per eval, 95% interval, in version order", chart.to_dict(validate=False))
