"""`--record` on an env that is not MuJoCo: its own render() is recorded, and where nothing can be
recorded the report says why in one sentence instead of ending as though nothing was asked."""

from __future__ import annotations

import textwrap

import pytest

import seq

pytest.importorskip("av")

ENVS = textwrap.dedent('''
    import numpy as np

    import seq


    class Dot:
        """No image in its observation, no MuJoCo; `render_mode` says what render() gives."""

        def __init__(self, render_mode):
            self.render_mode, self.x = render_mode, 0

        def reset(self, seed=None):
            self.x = 0
            return np.array([0.0]), {}

        def step(self, action):
            self.x += 1
            return np.array([float(self.x)]), 0.0, False, False, {}


    class Drawn(Dot):
        def render(self):
            if self.render_mode != "rgb_array":
                return None
            image = np.zeros((16, 16, 3), dtype=np.uint8)
            image[:, self.x % 16] = 255
            return image


    @seq.benchmark(name="blank", conditions=seq.conditions(tasks=["walk"], seeds=[0, 1]), max_steps=4)
    class Blank(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return Dot(None)

        @seq.check
        def check(self, env):
            return seq.Step(done=False, metrics={"success": 0.0})


    @seq.benchmark(name="drawn", conditions=seq.conditions(tasks=["walk"], seeds=[0, 1]), max_steps=4)
    class DrawnBench(Blank):
        @seq.setup
        def setup(self, render_mode: str = "rgb_array"):
            self.render_mode = None if render_mode == "none" else render_mode

        @seq.reset
        def reset(self, seed, variant):
            return Drawn(self.render_mode)


    @seq.policy(name="idle")
    class Idle(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.zeros(1)
''')


@pytest.fixture
def envs(tmp_path):
    path = tmp_path / "envs.py"
    path.write_text(ENVS)
    seq.deploy(path)


def test_an_env_with_its_own_render_is_recorded(envs):
    report = seq.eval.run("idle", benchmark="drawn", record="first", envs=1)
    assert [e for e in report.episodes if e.artifacts.get("video")]
    assert not any("chosen for a video" in note for note in report.notes)


def test_an_env_with_nothing_to_record_says_why_in_one_sentence(envs):
    report = seq.eval.run("idle", benchmark="blank", record="first", envs=1)
    (note,) = [note for note in report.notes if "chosen for a video" in note]
    assert "1 episode chosen for a video has none (0 recorded)" in note
    assert "Dot cannot be recorded: its observation holds no image" in note and "\n" not in note
    assert note in seq.eval.report(report.eval_id).to_markdown()  # every view tells it


def test_a_render_that_returns_nothing_names_gymnasiums_render_mode(envs):
    report = seq.eval.run("idle", benchmark="drawn", record="all", envs=1, params={"render_mode": "none"})
    (note,) = [note for note in report.notes if "chosen for a video" in note]
    assert "2 episodes chosen for a video have none" in note and "its render() returned None" in note
    assert "render_mode='rgb_array'" in note
