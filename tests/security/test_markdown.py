"""Names from user code (tasks, policies, metrics) and what it printed reach the Markdown report
inert: shown as written, never as HTML or a link, as the console and the HTML report show them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import run_cli

HOSTILE = textwrap.dedent("""
    import numpy as np

    import seq

    TAG = "<img src=x onerror=alert(1)>"

    class Still:
        def reset(self, seed=None):
            return np.zeros(1), {}

        def step(self, action):
            return np.zeros(1), 0.0, False, False, {}

    TASKS = [TAG, "[a](javascript:alert(2))"]

    @seq.benchmark(name="hostile", conditions=seq.conditions(tasks=TASKS, seeds=[0]), max_steps=3)
    class Hostile(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return Still()

        @seq.check
        def check(self, env):
            return seq.Step(done=True, metrics={"success": 1.0, "<b onmouseover=alert(3)>": 0.5})

    @seq.policy(name="hostile-policy")
    class Zero(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None, note: str = "<script>alert(4)</script>"):
            return np.zeros(1)
""")


def test_markdown_carries_no_raw_html_or_link_from_user_code(tmp_path: Path):
    source = tmp_path / "hostile.py"
    source.write_text(HOSTILE)
    assert run_cli("deploy", str(source)).returncode == 0
    ran = run_cli("eval", "run", "hostile-policy", "--benchmark", "hostile", "--envs", "1", "--json")
    assert ran.returncode == 0, ran.stderr
    markdown = tmp_path / "report.md"
    result = run_cli("eval", "report", "ev-", "--markdown", str(markdown))
    assert result.returncode == 0, result.stderr
    text = markdown.read_text()
    assert "&lt;img src=x onerror=alert(1)>" in text  # shown as written
    assert "&lt;b onmouseover=alert(3)>" in text
    assert "<img" not in text and "<b " not in text and "<script" not in text
    assert "](javascript:" not in text
