"""Plots keep long task names distinguishable: a distinct abbreviation on the axis, the whole
name on hover (an SVG `<title>`, a Vega tooltip) and in a legend under the plot.

(The HTML and SVG text are checked here; tests/console/test_console_browser.py checks the labels
as Chromium draws them.)"""

from __future__ import annotations

import html
import re
import textwrap

import pytest

import seq
from seq.report.charts import report_plots
from seq.report.labels import LABEL_CHARS, distinct_labels

pytest.importorskip("vl_convert")
pytest.importorskip("jinja2")

BOWLS = [
    "pick_up_the_black_bowl_next_to_the_ramekin_and_place_it_on_the_plate",
    "pick_up_the_black_bowl_next_to_the_cookie_box_and_place_it_on_the_plate",
    "pick_up_the_black_bowl_next_to_the_plate_and_place_it_on_the_plate",
    "pick_up_the_black_bowl_on_the_stove_and_place_it_on_the_plate",
]

BENCH = textwrap.dedent(f"""
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
""")


def test_labels_are_distinct_short_and_keep_names_that_fit():
    labels = distinct_labels([*BOWLS, "reach-v3"])
    assert labels["reach-v3"] == "reach-v3"
    shown = [labels[name] for name in BOWLS]
    assert len(set(shown)) == len(BOWLS)
    assert all(len(label) <= LABEL_CHARS for label in shown)
    assert "ramekin" in labels[BOWLS[0]] and "cookie_box" in labels[BOWLS[1]]


def test_the_html_report_shows_every_long_task_distinctly_with_its_whole_name(tmp_path):
    path = tmp_path / "bowls.py"
    path.write_text(BENCH)
    seq.deploy(path)
    report = seq.eval.run("bowl-idle", benchmark="bowls", envs=1)
    page = report.to_html()
    labels = distinct_labels(BOWLS)
    per_task = page[page.index("Every metric per task") :]
    figure = per_task[: per_task.index("</figure>")]
    for name in BOWLS:
        short = html.escape(labels[name], quote=False)
        # on the axis, whole, with the name on hover; and in the legend under the plot
        assert f">{short}<title>{html.escape(name)}</title></text>" in figure
        assert f"<li><code>{short}</code> {html.escape(name)}</li>" in figure
    axis = re.findall(r">([^<>]*)<title>", figure)
    assert len(set(axis)) == len(BOWLS)
    # the console draws the spec in the browser: its tooltip gives the whole name
    (plot,) = [p for p in report_plots(report, draw=False) if p.title.endswith("per task, 95% intervals")]
    assert {whole for _, whole in plot.labels} == set(BOWLS)
    assert "name" in str(plot.spec) and all(name in str(plot.spec) for name in BOWLS)
