"""The HTML view: one self-contained file with the tables every view has, plots, grouped errors
and linked recordings, and nothing that reaches the network."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq

pytest.importorskip("vl_convert")
pytest.importorskip("jinja2")


class Tables(HTMLParser):
    """Each `<table data-title>`'s rows of cell texts, and every URL the page would load."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.loads: list[str] = []
        self.links: list[str] = []
        self._title: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        if tag == "table" and "data-title" in attributes:
            self._title = attributes["data-title"]
            self.tables[self._title] = []
        elif tag == "tr" and self._title:
            self.tables[self._title].append([])
        elif tag in ("td", "th") and self._title:
            self._cell = []
        inline = str(attributes.get("href") or "").startswith("data:")  # the empty favicon
        if tag in ("script", "img", "iframe", "link", "source", "video", "object", "embed") and not inline:
            self.loads.append(f"<{tag}> {attributes}")
        if "href" in attributes and tag == "a":
            self.links.append(attributes["href"])
        for name in ("src", "srcset", "data"):
            if name in attributes:
                self.loads.append(attributes[name])

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._title = None
        elif tag in ("td", "th") and self._cell is not None and self._title:
            self.tables[self._title][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    tables: dict[str, list[list[str]]] = {}
    title = None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:]
        elif line.startswith("|") and title is not None and not set(line) <= set("|-: "):
            cells = [cell.strip().replace("\\|", "|") for cell in line.strip().strip("|").split(" | ")]
            tables.setdefault(title, []).append(cells)
    return tables


def parsed(text: str) -> Tables:
    parser = Tables()
    parser.feed(text)
    return parser


def test_the_html_file_has_every_table_of_the_markdown_and_its_plots(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run(
        "line-controller", benchmark="line", vs="line-controller", vs_params={"noise": "0.3"}, envs=2
    )
    html = tmp_path / "out" / "report.html"
    result = run_cli("eval", "report", report.eval_id[:8], "--html", str(html))
    assert result.returncode == 0, result.stderr
    assert f"wrote {html}" in result.stdout
    text = html.read_text()
    page = parsed(text)
    assert page.tables == markdown_tables(report.to_markdown())  # every table, cell for cell
    assert "Per task" in page.tables and any(t.startswith("Paired comparisons") for t in page.tables)
    assert any(t.startswith("Across tasks") for t in page.tables)
    assert page.loads == []  # no script, image, stylesheet or frame: nothing is fetched
    assert text.count("<svg") == 5  # per suite, per task, forest, task × arm, across tasks
    assert "equivalence margin ±0.05" in text
    for line in ("Reproducibility manifest", "benchmark line@v1 sha256", "seeds: 0, 1, 2"):
        assert line in text


def test_errors_are_grouped_and_recordings_linked(toy_file, tmp_path):
    from console_records import RUNNING_ID, running_eval

    seq.deploy(toy_file)
    errored = seq.eval.run("line-controller", benchmark="line-errors", envs=2)
    text = errored.to_html()
    assert "<h2>Errors and timeouts</h2>" in text
    headline = re.search(
        r"<strong>benchmark error</strong>: (2 episodes: RuntimeError: this task cannot be built)", text
    )
    assert headline, text[text.index("Errors and timeouts") :][:600]
    store = seq.Store()
    lease = running_eval(store, done=3, total=8)
    try:
        report = seq.eval.report(RUNNING_ID)
        page = parsed(report.to_html(tmp_path / "running.html"))
    finally:
        lease.release()
    videos = [Path(e.artifacts["video"]).as_uri() for e in report.episodes]
    assert len(videos) == 3 and [link for link in page.links if link.endswith(".mp4")] == videos
    assert "PARTIAL: these results cover 3 of 8 episodes" in (tmp_path / "running.html").read_text()


def test_a_comparison_of_two_evals_writes_html_too(toy_file, tmp_path):
    seq.deploy(toy_file)
    first = seq.eval.run("line-controller", benchmark="line", envs=2)
    second = seq.eval.run("line-controller", benchmark="line", envs=2, params={"noise": "0.3"})
    html = tmp_path / "compare.html"
    result = run_cli("eval", "compare", first.eval_id, second.eval_id, "--html", str(html))
    assert result.returncode == 0, result.stderr
    text = html.read_text()
    assert "forest plot" in text and f"A {first.eval_id}" in text


def test_html_without_its_extra_is_refused_before_anything_is_printed(toy_file, tmp_path):
    """A Python without jinja2 (as `sys.modules` marks a module that cannot be imported): the
    command says which extra to install, and prints no report first."""
    import os
    import subprocess
    import sys

    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1, seeds=[0])
    page = tmp_path / "report.html"
    refused = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['jinja2'] = None; from seq.cli import main; main()",
         "eval", "report", report.eval_id, "--html", str(page)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    refused_in_one_line(refused, "--html", "jinja2", "pip install 'seq[console]'")
    assert refused.stdout == "" and not page.exists()
