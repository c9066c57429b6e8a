"""`seq ui` in a real headless Chromium: every page loads, shows the report's numbers, an
episode's video plays; the HTML report shows its plots offline. Screenshots go to
`$SEQ_TEST_ARTIFACTS/console` (else the test's tmp folder) for CI to keep."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from console_records import build_record

import seq
from seq.report.labels import distinct_labels

sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("starlette")
pytest.importorskip("vl_convert")
CHROMIUM = "/usr/bin/chromium"  # Debian's package: Playwright cannot download its own here


def shown(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def shown_interval(metric: dict) -> str:
    text = shown(metric.get("value", metric.get("mean")))
    if metric.get("low") is None or metric.get("high") is None:
        return text
    return f"{text} [{shown(metric['low'])}, {shown(metric['high'])}]"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    root = Path(os.environ["SEQ_TEST_ARTIFACTS"]) if os.environ.get("SEQ_TEST_ARTIFACTS") else tmp_path
    folder = root / "console"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def console(toy_file):
    """A record with a two-arm eval, two evals to compare and a running one, and `seq ui` on it."""
    if not Path(CHROMIUM).exists():  # a machine's package, not a Python one: CI installs it
        missing = f"{CHROMIUM} is missing: apt-get install chromium"
        pytest.fail(missing) if os.environ.get("SEQ_REQUIRE_BROWSER") else pytest.skip(missing)
    seq.deploy(toy_file)
    record = build_record()
    port = free_port()
    ui = ["ui", "--port", str(port), "--refresh", "600"]  # no reload mid-click (default: every 5 s)
    server = subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", *ui],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=5).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"seq ui did not start: {server.stdout.read()}") from None
                time.sleep(0.2)
        yield url, record
    finally:
        server.terminate()
        server.wait(timeout=10)
        record.close()


@pytest.fixture
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def watched_page(browser):
    """A page that collects its console errors, failed loads and every request it makes."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.problems, page.requests = [], []
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.on("requestfailed", lambda r: page.problems.append(f"failed: {r.url}"))
    page.on("request", lambda r: page.requests.append(r.url))
    return page


def plots_drawn(page) -> int:
    """Waits until every plot of the page is drawn (the browser draws the console's), and counts
    those with a visible size."""
    page.wait_for_function(
        "[...document.querySelectorAll('figure.chart')].every(f => f.querySelector('svg'))", timeout=30_000
    )
    return page.eval_on_selector_all(
        "figure.chart svg", "els => els.filter(e => e.getBBox().width > 0 && e.getBBox().height > 0).length"
    )


def table_rows(page, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"{selector} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"
    )


def report_table(page, title: str) -> list[list[str]]:
    return table_rows(page, f'table.report-table[data-title="{title}"]')


def test_every_page_in_chromium_shows_the_reports_numbers(console, browser, artifacts):
    url, record = console
    page = watched_page(browser)
    reports = {
        eval_id: json.loads(seq.eval.report(eval_id).to_json())
        for eval_id in (record.arms, record.first, record.second, record.running)
    }

    # the evals list: status, done/total and each arm's primary metric so far, as the report has them
    page.goto(url + "/")
    page.screenshot(path=artifacts / "evals.png", full_page=True)
    rows = {row[0]: row for row in table_rows(page, "#evals")}
    assert set(rows) == set(reports)
    for eval_id, report in reports.items():
        row = rows[eval_id]
        assert row[1].splitlines()[0] == report["status"]
        assert row[4] == f"{report['done']}/{report['total']}"
        overall = [g for g in report["groups"] if g["kind"] == "overall"]
        for group in overall:
            success = next(m for m in group["metrics"] if m["name"] == "success")
            assert shown_interval(success) in row[7], (eval_id, row[7])
    assert rows[record.running][1] == "running" and rows[record.running][4] == "3/8"
    page.select_option('select[name="status"]', "running")
    with page.expect_navigation():
        page.click("form.filters button")
    assert [r[0] for r in table_rows(page, "#evals")] == [record.running]
    # an eval with two arms: every group table, plots, and the numbers of the report's JSON
    page.goto(f"{url}/evals/{record.arms}")
    assert plots_drawn(page) == 5  # per suite, per task, forest, task × arm, across tasks
    page.screenshot(path=artifacts / "eval-arms.png", full_page=True)
    report = reports[record.arms]
    metric_names = [m["name"] for m in report["groups"][0]["metrics"]]
    for title, kind in (("Overall", "overall"), ("Per suite", "suite"), ("Per task", "task")):
        shown_rows = report_table(page, title)
        groups = [g for g in report["groups"] if g["kind"] == kind]
        assert len(shown_rows) == len(groups)
        for cells, group in zip(shown_rows, groups, strict=True):
            assert cells[:2] == [group["arm"], group["name"]]
            values = dict(zip(metric_names, cells[3:], strict=False))
            for metric in group["metrics"]:
                assert values[metric["name"]] == shown_interval(metric), (title, group["name"], metric)
    captions = page.eval_on_selector_all("figure.chart figcaption", "els => els.map(e => e.innerText)")
    assert "Paired difference per group (forest plot)" in captions and "Task × arm" in captions
    forest = page.locator("figure.chart", has_text="forest plot").inner_text()
    assert "equivalence margin ±0.05" in forest

    # the running eval: done/total so far, its episodes, and one episode's video and trajectory
    page.goto(f"{url}/evals/{record.running}")
    assert plots_drawn(page) == 2  # per suite, per task
    # it reloads itself as `seq ui --refresh 600` says (the default 5 s could fire mid-click here)
    assert page.get_attribute('meta[http-equiv="refresh"]', "content") == "600"
    page.screenshot(path=artifacts / "eval-running.png", full_page=True)
    running = reports[record.running]
    assert page.inner_text('[data-field="done"]') == "3" and page.inner_text('[data-field="total"]') == "8"
    overall = report_table(page, "Overall")[0]
    success = next(m for m in running["groups"][0]["metrics"] if m["name"] == "success")
    assert shown_interval(success) in overall
    assert len(table_rows(page, "#episodes-table")) == 3
    page.click("a[data-outcome=fail]")
    assert len(table_rows(page, "#episodes-table")) == 1
    page.click("a.episode-link")
    page.wait_for_function("document.getElementById('recording').readyState >= 2", timeout=20_000)
    assert page.evaluate("document.getElementById('recording').error") is None
    assert page.evaluate("document.getElementById('recording').duration") > 0.5
    captions = page.eval_on_selector_all("figure.chart figcaption", "els => els.map(e => e.innerText)")
    assert captions == ["Actions over steps", "Reward over steps"] and plots_drawn(page) == 2
    page.screenshot(path=artifacts / "episode.png", full_page=True)

    # a comparison of two evals, chosen in the form
    page.goto(url + "/compare")
    page.select_option('select[name="a"]', record.first)
    page.select_option('select[name="b"]', record.second)
    page.click("form.filters button")
    page.screenshot(path=artifacts / "compare.png", full_page=True)
    compared = json.loads(seq.eval.compare(record.first, record.second).to_json())
    paired = report_table(
        page,
        next(
            t
            for t in page.eval_on_selector_all("table.report-table", "els => els.map(e => e.dataset.title)")
            if t.startswith("Paired")
        ),
    )
    first = next(
        c
        for c in compared["comparisons"]
        if c["kind"] == "overall" and c["comparison"]["metric"] == "success"
    )
    difference = first["comparison"]["difference"]
    row = next(cells for cells in paired if cells[1] == "all" and cells[2] == "success")
    expected = f"{shown(difference['difference'])} [{shown(difference['low'])}, {shown(difference['high'])}]"
    assert row[7] == expected and row[10] == first["comparison"]["verdict"]

    # the benchmark over its evals: each eval's primary metric with its interval
    page.goto(url + "/benchmarks/line")
    assert plots_drawn(page) == 1
    page.screenshot(path=artifacts / "benchmark.png", full_page=True)
    trend = {row[1]: row for row in table_rows(page, "#trend")}
    for eval_id in (record.first, record.second, record.running):
        success = next(m for m in reports[eval_id]["groups"][0]["metrics"] if m["name"] == "success")
        assert shown_interval(success) in trend[eval_id][6]
    assert page.problems == [], page.problems


def test_the_html_report_shows_its_plots_offline(toy_file, browser, artifacts, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line", vs="line-controller", vs_params={"noise": "0.3"}, envs=2
    )
    path = tmp_path / "report.html"
    report.to_html(path)
    page = watched_page(browser)
    page.goto(path.as_uri())
    page.screenshot(path=artifacts / "report-html.png", full_page=True)
    drawn = page.eval_on_selector_all(
        "figure.chart svg", "els => els.filter(e => e.getBBox().height > 0).length"
    )
    assert drawn == 5  # per suite, per task, forest, task × arm, across tasks
    assert page.problems == []
    assert page.requests == [path.as_uri()]  # the file itself, and nothing from the network


BOWLS = [
    "pick_up_the_black_bowl_next_to_the_ramekin_and_place_it_on_the_plate",
    "pick_up_the_black_bowl_next_to_the_cookie_box_and_place_it_on_the_plate",
    "pick_up_the_black_bowl_next_to_the_plate_and_place_it_on_the_plate",
]
BOWLS_BENCH = f"""
import numpy as np

import seq


class Still:
    def reset(self, seed=None):
        return np.zeros(1), {{}}

    def step(self, action):
        return np.zeros(1), 0.0, False, False, {{}}


@seq.benchmark(name="bowls", conditions=seq.conditions(tasks={BOWLS!r}, seeds=[0, 1]), max_steps=2)
class Bowls(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return Still()

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={{"success": 0.0}})


@seq.policy(name="bowl-idle")
class Idle(seq.Policy):
    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        return np.zeros(1)
"""


def test_long_task_names_read_apart_in_the_html_reports_plots(browser, artifacts, tmp_path, seq_home):
    """Three LIBERO-like tasks alike for their first 35 characters: each axis label, as Chromium
    draws it, is the report's whole abbreviation and unlike the others, with the whole name on
    hover and in the plot's legend."""
    source = tmp_path / "bowls.py"
    source.write_text(BOWLS_BENCH)
    seq.deploy(source)
    path = tmp_path / "bowls.html"
    seq.eval.run("bowl-idle", benchmark="bowls", envs=1).to_html(path)
    page = watched_page(browser)
    page.goto(path.as_uri())
    figure = page.locator("figure.chart", has_text="per task").first
    figure.screenshot(path=artifacts / "report-long-task-names.png")
    drawn = figure.evaluate(
        """f => [...f.querySelectorAll('svg text')].map(t => [
            [...t.childNodes].filter(n => n.nodeType === 3).map(n => n.nodeValue).join(''),
            t.querySelector('title') ? t.querySelector('title').textContent : null,
        ])"""
    )
    axis = {whole: shown for shown, whole in drawn if whole in BOWLS}
    assert set(axis) == set(BOWLS), drawn
    assert len(set(axis.values())) == len(BOWLS)
    assert axis == distinct_labels(BOWLS)  # drawn whole: Vega cut none of them further
    legend = figure.evaluate("f => [...f.querySelectorAll('li')].map(li => li.innerText)")
    assert all(any(name in item for item in legend) for name in BOWLS), legend
    assert page.problems == []
