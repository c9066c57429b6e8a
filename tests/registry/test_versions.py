"""A version changes when what its class runs changes: its own source, the module code it shares
(helpers, constants, imports), and the registered classes it names — not the file's other classes."""

from __future__ import annotations

import textwrap

from conftest import run_cli

import seq

FILE = textwrap.dedent(
    """
    import seq

    STEP = 0.1


    def toward(x, goal):
        return max(-STEP, min(STEP, goal - x))


    class Walk:
        def reset(self, seed=None):
            self.x = 0.0
            return [self.x], {}

        def step(self, action):
            self.x += float(action[0])
            return [self.x], 0.0, False, False, {}


    @seq.benchmark(name="walk", conditions=seq.conditions(tasks=["a"], seeds=[0]), max_steps=20)
    class WalkBench(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return Walk()

        @seq.check
        def check(self, env):
            return seq.Step(done=env.x >= 1.0, metrics={"success": float(env.x >= 1.0)})


    @seq.benchmark(name="walk-far", conditions=seq.conditions(tasks=["a"], seeds=[0]), max_steps=40)
    class WalkFar(WalkBench):
        pass


    @seq.policy(name="walker")
    class Walker(seq.Policy):
        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return [toward(obs[0], 1.0)]
    """
)


def _deploy(path, text: str) -> dict[str, tuple[int, bool]]:
    path.write_text(text)
    return {d.version.name: (d.version.version, d.created) for d in seq.deploy(path)}


def test_changing_only_the_benchmark_class_leaves_the_policy_at_its_version(tmp_path):
    path = tmp_path / "walk.py"
    assert _deploy(path, FILE) == {"walk": (1, True), "walk-far": (1, True), "walker": (1, True)}
    changed = FILE.replace("max_steps=20)", "max_steps=25)")
    assert _deploy(path, changed) == {"walk": (2, True), "walk-far": (2, True), "walker": (1, False)}
    far_only = changed.replace("max_steps=40)", "max_steps=45)")
    assert _deploy(path, far_only) == {"walk": (2, False), "walk-far": (3, True), "walker": (1, False)}


def test_changing_a_helper_the_policy_calls_makes_a_new_policy_version(tmp_path):
    path = tmp_path / "walk.py"
    _deploy(path, FILE)
    assert _deploy(path, FILE.replace("STEP = 0.1", "STEP = 0.2"))["walker"] == (2, True)
    helper = FILE.replace("STEP = 0.1", "STEP = 0.2").replace("max(-STEP,", "max(-STEP / 2,")
    assert _deploy(path, helper)["walker"] == (3, True)


def test_a_main_block_that_runs_the_classes_is_not_part_of_any_version(tmp_path):
    path = tmp_path / "walk.py"
    _deploy(path, FILE)
    main = FILE + '\nif __name__ == "__main__":\n    seq.eval.run(Walker, benchmark=WalkBench)\n'
    assert _deploy(path, main) == {"walk": (1, False), "walk-far": (1, False), "walker": (1, False)}


def test_deploy_says_which_classes_are_unchanged(tmp_path):
    path = tmp_path / "walk.py"
    _deploy(path, FILE)
    path.write_text(FILE.replace("max_steps=20)", "max_steps=25)"))
    result = run_cli("deploy", str(path))
    assert result.returncode == 0, result.stderr
    assert "walk@v2  (benchmark, registered)" in result.stdout
    assert "walker@v1  (policy, unchanged)" in result.stdout
