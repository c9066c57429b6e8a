"""`seq evolve report --html`: one self-contained file with the numbers of the Markdown report,
built from a real (toy) evolve run."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from conftest import run_cli
from test_loop_toy import LINE

pytest.importorskip("jinja2")
pytest.importorskip("vl_convert")


class Tables(HTMLParser):
    """Every `<table data-title=…>`'s rows of cell texts, and every src/href value."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.links: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.links += [value or "" for name, value in attrs if name in ("src", "href", "xlink:href")]
        if tag == "table":
            self._table = found.get("data-title")
            self.tables[self._table or ""] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None


def _markdown_rows(text: str, header: str) -> list[list[str]]:
    """The body rows of the Markdown table whose header row starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    home = tmp_path_factory.mktemp("evolve-html")
    env = {"SEQ_HOME": str(home)}
    path = home / "walk.py"
    path.write_text(LINE)
    assert run_cli("deploy", str(path), env=env).returncode == 0
    done = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "walk-steady",
                   "--trials", "12", "--reference-trials", "1", "--envs", "1", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return env, home


def test_the_html_report_shows_the_markdown_numbers_offline(evolved, monkeypatch):
    env, home = evolved
    target = home / "report.html"
    done = run_cli("evolve", "report", "--html", str(target), "-o", str(home / "report.md"), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    page, markdown = target.read_text(), (home / "report.md").read_text()
    parsed = Tables()
    parsed.feed(page)
    # self-contained: nothing fetched from anywhere, no script
    assert not [link for link in parsed.links if re.match(r"\s*(https?:)?//", link)]
    assert "<script" not in page and page.count("<svg") == 2  # the heatmap and cycle 1's frontier

    frontier = _markdown_rows(markdown, "| task | base | evolved |")
    assert frontier and parsed.tables["frontier-1"][1:] == frontier
    promoted = _markdown_rows(markdown, "| candidate | task |")
    html_promoted = parsed.tables["promoted-1"][1:]
    assert promoted and [row[:9] for row in html_promoted] == promoted
    operators = _markdown_rows(markdown, "| operator | promote |")
    assert parsed.tables["operators-1"][1:] == operators
    fresh = _markdown_rows(markdown, "| candidate judged |")  # every candidate on fresh trials
    assert fresh and parsed.tables["fresh-1"][1:] == fresh

    monkeypatch.setenv("SEQ_HOME", env["SEQ_HOME"])
    import seq.evolve

    data = seq.evolve.report_data("walk")
    heatmap = parsed.tables["heatmap"]
    columns = heatmap[0][1:]
    assert set(columns) == {row["column"] for row in data["heatmap"]}
    for row in data["heatmap"]:
        line = next(r for r in heatmap[1:] if r[0] == row["task"])
        shown = f"{row['success']:.0%} [{row['low']:.0%}, {row['high']:.0%}] (n {row['n']})"
        assert line[1 + columns.index(row["column"])] == shown
    # the reference solves the candidates it promoted; the target's version row counts 2 × 2 × 12
    reference = [r for r in data["heatmap"] if r["column"].startswith("reference")]
    assert reference and sum(r["n"] for r in data["heatmap"] if r["column"] == "target · walk@v1") == 48
    assert data["cycles"][0]["promoted"][0]["reference_success"] == 1.0
    # the target on the candidates: the gate's fresh trials (12–23) of each candidate, not the
    # seed conditions beside them nor the trials that repeat the cycle's eval
    candidates = len(data["cycles"][0]["promoted"]) + sum(
        data["cycles"][0]["operators"][0][d] for d in ("review", "reject")
    )
    column = [r for r in data["heatmap"] if r["column"] == "target · candidates y1"]
    assert sum(r["n"] for r in column) == 12 * candidates


@pytest.mark.parametrize("flag", ["--html", "--output"])
def test_a_folder_for_the_report_file_is_bad_input(evolved, flag):
    env, home = evolved
    done = run_cli("evolve", "report", flag, str(home), env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{flag} {home}: that is a folder" in done.stderr
