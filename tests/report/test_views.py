"""One report object, rendered as terminal text, JSON, Markdown and CSV: the same numbers in each."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from conftest import run_cli

import seq


def shown(value: float | None) -> str:
    """A number as every view prints it: `1,234`, `12.3`, `0.12`."""
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def shown_interval(value: float | None, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return shown(value)
    return f"{shown(value)} [{shown(low)}, {shown(high)}]"


def markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Each `## title` section's table as rows of {header: cell}."""
    tables: dict[str, list[dict[str, str]]] = {}
    title, headers = None, None
    for line in text.splitlines():
        if line.startswith("## "):
            title, headers = line[3:], None
        elif line.startswith("|") and title is not None:
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            if headers is None:
                headers = cells
            elif not set(line) <= set("|-: "):
                tables.setdefault(title, []).append(dict(zip(headers, cells, strict=True)))
    return tables


def test_every_view_renders_the_same_numbers(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    markdown, runs = tmp_path / "report.md", tmp_path / "runs.csv"
    result = run_cli("eval", "report", report.eval_id, "--markdown", str(markdown), "--csv", str(runs))
    assert result.returncode == 0, result.stderr
    assert "Per task" in result.stdout and "RuntimeError: this task cannot be built" in result.stdout
    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout)
    overall = as_json["groups"][0]
    assert overall["kind"] == "overall" and overall["errors"] == 2 and overall["timed_out"] == 1
    assert [u["task"] for u in as_json["unfinished"]] == ["crash"]  # its worker died: no result
    success = next(m for m in overall["metrics"] if m["name"] == "success")
    assert success["method"] == "wilson" and success["n"] == 3 and success["small_n"] is True
    assert as_json["manifest"]["policy"]["name"] == "line-controller"

    # CSV, one row per episode: the JSON's episodes, value for value
    rows = {r["item_id"]: r for r in csv.DictReader(runs.open())}
    assert len(rows) == 5 and {r["status"] for r in rows.values()} == {"ok", "error", "timed_out"}
    for episode in as_json["episodes"]:
        row = rows[episode["item_id"]]
        assert row["status"] == episode["status"] and int(row["steps"]) == episode["steps"]
        for name, value in episode["metrics"].items():
            column = "duration_s" if name == "duration_s" else name
            assert float(row[column]) == pytest.approx(value, rel=1e-12), (name, episode["item_id"])

    # each group's mean in the JSON is the mean of the CSV's episodes that did not error
    for group in as_json["groups"]:
        members = [
            r
            for r in rows.values()
            if r["status"] != "error" and (group["kind"] == "overall" or r["task"] == group["name"])
        ]
        for metric in group["metrics"]:
            if metric["source"] == "mean":
                values = [float(r[metric["name"]]) for r in members]
                assert metric["value"] == pytest.approx(sum(values) / len(values), rel=1e-9)
                assert metric["n"] == len(values)

    # Markdown and the terminal print those numbers, formatted, in the group's row and column
    tables = markdown_tables(Path(markdown).read_text())
    for title, kind in (("Overall", "overall"), ("Per task", "task")):
        label = "group" if kind == "overall" else "task"
        by_name = {row[label]: row for row in tables[title]}
        for group in (g for g in as_json["groups"] if g["kind"] == kind):
            for metric in group["metrics"]:
                expected = shown_interval(metric["value"], metric["low"], metric["high"])
                assert by_name[group["name"]][metric["name"]] == expected
                assert expected in result.stdout

    # the summary CSV beside it holds the same group rows, numerically
    summary = list(csv.DictReader((tmp_path / "runs.summary.csv").open()))
    for group in as_json["groups"]:
        for metric in group["metrics"]:
            row = next(
                r
                for r in summary
                if (r["row"], r["group_kind"], r["group"], r["metric"])
                == ("group", group["kind"], group["name"], metric["name"])
            )
            assert float(row["value"]) == pytest.approx(metric["value"], rel=1e-12)
            for end in ("low", "high"):
                if metric[end] is None:
                    assert row[end] == ""
                else:
                    assert float(row[end]) == pytest.approx(metric[end], rel=1e-12)
            assert row["method"] == metric["method"] and int(row["n"]) == metric["n"]


def test_json_has_no_nan(tmp_path):
    path = tmp_path / "nan_bench.py"
    path.write_text(NAN_BENCH)
    seq.deploy(path)
    report = seq.eval.run("nan-walker", benchmark="nan-metric", envs=1)

    def refuse(constant: str) -> None:
        raise AssertionError(f"the JSON holds {constant}")

    as_json = json.loads(run_cli("eval", "report", report.eval_id, "--json").stdout, parse_constant=refuse)
    gap = next(m for m in as_json["groups"][0]["metrics"] if m["name"] == "gap")
    assert gap["value"] is None and gap["low"] is None
    assert all(e["metrics"]["gap"] is None for e in as_json["episodes"])
    assert math.isnan(report.metric("gap").value)  # the object keeps the float; JSON has no NaN
    files = seq.eval.export(report.eval_id, tmp_path / "out")
    for line in files["episodes"].read_text().splitlines():
        assert json.loads(line, parse_constant=refuse)["metrics"]["gap"] is None


NAN_BENCH = """
import seq


class Env:
    def reset(self, seed=None):
        self.t = 0
        return [0.0], {}

    def step(self, action):
        self.t += 1
        return [0.0], 0.0, self.t >= 2, False, {}


@seq.benchmark(name="nan-metric", conditions=seq.conditions(tasks=["t"], seeds=range(3)), max_steps=5)
class NanMetric(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return Env()

    @seq.check
    def check(self, env):
        return seq.Step(done=env.t >= 2, metrics={"success": 1.0, "gap": float("nan")})


@seq.policy(name="nan-walker")
class Walker(seq.Policy):
    @seq.infer
    def infer(self, obs, **_):
        return [0.0]
"""


def test_status_and_ls(toy_file):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", tasks=["near"], envs=1)
    status = run_cli("eval", "status", report.eval_id)
    assert status.returncode == 0 and "3/3 episodes" in status.stdout and "success" in status.stdout
    listing = json.loads(run_cli("eval", "ls", "--json").stdout)
    assert listing[0]["id"] == report.eval_id and listing[0]["done"] == 3


def test_a_report_prints_itself_as_the_terminal_shows_it(toy_file):
    import io

    from rich.console import Console

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1, seeds=[0])
    shown = io.StringIO()
    report.print(Console(file=shown, width=80))
    text = shown.getvalue()
    assert f"eval {report.eval_id}" in text and "Per task" in text
    assert max(len(line) for line in text.splitlines()) <= 80
