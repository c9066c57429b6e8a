"""Reports at 80 columns (a pipe, a CI log, a small terminal): every value printed whole.

A comparison report read at `COLUMNS=80` must show each number, interval and verdict of its JSON
view on one line, uncut, and no line may be wider than the terminal.
"""

from __future__ import annotations

import json

from conftest import run_cli
from rich.cells import cell_len

import seq

METHODS = {
    "tango": "Tango score",
    "paired-bootstrap-bca": "paired BCa bootstrap",
    "paired-bootstrap-percentile": "paired percentile bootstrap",
    "paired-bootstrap (all values equal)": "zero width (every difference equal)",
    "paired-t": "paired Student t",
    "paired-t (all differences equal)": "zero width (every difference equal)",
    "none (fewer than 2 pairs)": "no interval (fewer than 2 pairs)",
    "none (n=1)": "no interval (n=1)",
}
METHODS |= {f"{key} (clustered)": f"{name} at the effective n" for key, name in METHODS.items()}


def shown(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def shown_interval(interval: dict) -> str:
    value = interval.get("mean", interval.get("difference"))
    if interval["low"] is None or interval["high"] is None:
        return shown(value)
    return f"{shown(value)} [{shown(interval['low'])}, {shown(interval['high'])}]"


def expected_values(report: dict) -> list[str]:
    """Every value the terminal view of this report must print: each group's metrics, each paired
    row's sides, table, difference, method, p, verdict and Agresti–Min interval, and the
    across-tasks rows."""
    values = []
    for group in report["groups"]:
        for metric in group["metrics"]:
            values.append(
                shown_interval({"mean": metric["value"], "low": metric["low"], "high": metric["high"]})
            )
    first_metric = report["comparisons"][0]["comparison"]["metric"]
    for row in report["comparisons"]:
        c = row["comparison"]
        if row["kind"] != "overall" and c["metric"] != first_metric:
            continue  # the terminal shows every metric overall, the first one per suite and task
        values += [shown_interval(c["rate_a"]), shown_interval(c["rate_b"]), shown_interval(c["difference"])]
        values.append(c["verdict"])
        values.append(METHODS[c["verdict_interval"]])
        if c["table"] is not None:
            t = c["table"]
            values.append(f"{t['both']}/{t['only_a']}/{t['only_b']}/{t['neither']}")
            clustered = " at the effective n" if c["test"].endswith(" (clustered)") else ""
            values.append(f"{c['p_value']:.3g} (McNemar exact{clustered})")
            values.append(shown_interval(c["agresti_min"]))
    for row in report["across_tasks"]:
        values.append(shown_interval({"mean": row["iqm"], "low": row["iqm_low"], "high": row["iqm_high"]}))
        if "probability_of_improvement" in row:
            values.append(
                shown_interval(
                    {
                        "mean": row["probability_of_improvement"],
                        "low": row["poi_low"],
                        "high": row["poi_high"],
                    }
                )
            )
    return values


def assert_whole_at_80(text: str, report: dict) -> None:
    lines = text.splitlines()
    too_wide = [line for line in lines if cell_len(line) > 80]
    assert not too_wide, too_wide
    assert "…" not in text.split("\nmanifest: ")[0]  # the manifest shortens sha256s on purpose
    missing = [value for value in expected_values(report) if not any(value in line for line in lines)]
    assert not missing, missing


def test_a_two_arm_report_at_80_columns_keeps_every_value_whole(toy_file):
    seq.deploy(toy_file)
    ran = run_cli(
        "eval", "run", "line-controller", "--benchmark", "line", "--trials", "2", "--param", "noise=0.0",
        "--vs", "line-controller", "--vs-param", "noise=0.3", "--envs", "2",
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    eval_id = seq.eval.ls()[0]["id"]
    report = json.loads(run_cli("eval", "report", eval_id, "--json").stdout)
    assert report["comparisons"] and report["across_tasks"]
    assert_whole_at_80(ran.stdout, report)
    text = run_cli("eval", "report", eval_id, env={"COLUMNS": "80"}).stdout
    assert_whole_at_80(text, report)
    assert "undecided" in text or "B better" in text or "A better" in text


def test_eval_compare_at_80_columns_keeps_every_value_whole(toy_file):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", envs=2, trials=2)
    second = seq.eval.run("line-controller", benchmark="line", envs=2, trials=2, params={"noise": "0.4"})
    report = json.loads(run_cli("eval", "compare", first.eval_id, second.eval_id, "--json").stdout)
    text = run_cli("eval", "compare", first.eval_id, second.eval_id, env={"COLUMNS": "80"}).stdout
    assert_whole_at_80(text, report)
    wide = run_cli("eval", "compare", first.eval_id, second.eval_id, env={"COLUMNS": "250"}).stdout
    assert "┃ arm" in wide  # where the table fits, it is drawn as a table
    for value in expected_values(report):
        assert value in wide
