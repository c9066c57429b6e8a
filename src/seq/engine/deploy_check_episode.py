"""A benchmark's check: one short episode in the benchmark's own environment.

`check_episode(ref)` loads the benchmark's class, runs `@seq.setup`, resets its first condition,
takes a few steps with uniformly random actions (where the env's `action_space` has bounds),
runs `@seq.check` after each, and renders one frame if the benchmark records. It returns what it
measured and the error that stopped it, if one did; what the benchmark printed is its caller's to
capture (`seq.engine.deploy_check`).

`python -m seq.engine.deploy_check_episode RESULT_FILE REF_JSON` runs it in another Python (an
image's) and writes the result as JSON to RESULT_FILE.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CHECK_STEPS = 5  # steps of random actions: enough to see a step work and time it


def describe_value(value: Any) -> Any:
    """An observation's layout: `{key: "shape dtype"}` for a dict (nested), else its shape."""
    if isinstance(value, dict):
        return {str(key): describe_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not all(isinstance(item, (int, float)) for item in value):
        return [describe_value(item) for item in value]
    array = np.asarray(value)
    return f"{list(array.shape)} {array.dtype}"


def _space(space: Any) -> dict[str, Any] | None:
    """The action space's shape and bounds, where it has them."""
    if space is None:
        return None
    found: dict[str, Any] = {"type": type(space).__name__}
    if getattr(space, "shape", None) is not None:
        found["shape"] = list(space.shape)
    if hasattr(space, "low") and hasattr(space, "high"):
        found["low"] = float(np.min(space.low))
        found["high"] = float(np.max(space.high))
    return found


def _random_action(space: Any, rng: np.random.Generator) -> np.ndarray | None:
    if space is None or not (hasattr(space, "low") and hasattr(space, "high")):
        return None
    low, high = np.asarray(space.low, dtype=np.float64), np.asarray(space.high, dtype=np.float64)
    low, high = np.nan_to_num(low, neginf=-1.0), np.nan_to_num(high, posinf=1.0)
    return rng.uniform(low, high).astype(np.asarray(space.low).dtype)


def _frame(env: Any, obs: Any, render: dict[str, Any], figures: dict[str, Any]) -> None:
    """Render one frame as a recording would: the observation's camera image, else MuJoCo."""
    from seq.capture.render import choose_backend, frame, image_from_obs, mujoco_handles

    camera = render.get("camera")
    image = image_from_obs(obs, camera)
    if image is None and mujoco_handles(env) is not None:
        info = choose_backend()
        figures["renderer"] = f"{info.backend}: {info.renderer}" if info else "none"
        image = frame(env, camera)
    if image is None and hasattr(env, "render"):
        image = env.render()
    figures["frame"] = describe_value(image) if image is not None else None


def _failure(error: BaseException, stage: str) -> dict[str, Any]:
    """What failed the check: the stage, the exception and, for a missing module, its name."""
    missing = None
    cause: BaseException | None = error
    while cause is not None and missing is None:
        if isinstance(cause, ModuleNotFoundError) and cause.name:
            missing = cause.name.split(".")[0]
        cause = cause.__cause__ or cause.__context__
    return {
        "stage": stage,
        "type": type(error).__name__,
        "message": str(error),
        "module": missing,
        "traceback": "".join(traceback.format_exception(error)),
    }


def check_episode(
    ref: dict[str, Any], steps: int = CHECK_STEPS, on_stage: Callable[[str], object] | None = None
) -> dict[str, Any]:
    """Run the check here; returns `{"figures": {...}, "failure": None | {...}}`. `on_stage` is
    told each stage as it starts (import, setup, reset, step, render), for a caller that must say
    where a process that died stopped."""
    from seq.authoring.benchmark import spec_of
    from seq.authoring.env_contract import check_metrics, close_env, reset_env, step_outcome
    from seq.engine.batch import step_alone
    from seq.registry.loader import load_class

    figures: dict[str, Any] = {"python": sys.version.split()[0]}
    stage, kept = "import", list[Any]()  # kept: the env once built, closed even if its reset fails
    started = time.perf_counter()

    def enter(name: str) -> str:
        if on_stage is not None:
            on_stage(name)
        return name

    try:
        enter(stage)
        cls = load_class(ref)
        spec = spec_of(cls)
        figures["import_s"] = round(time.perf_counter() - started, 3)
        stage, started = enter("setup"), time.perf_counter()
        benchmark = cls()
        if "setup" in spec.hooks:
            getattr(benchmark, spec.hooks["setup"])()
        figures["setup_s"] = round(time.perf_counter() - started, 3)
        condition = spec.suites[spec.default_suite][0]
        figures["condition"] = condition.key
        stage, started = enter("reset"), time.perf_counter()
        env, obs, _ = reset_env(benchmark, spec, condition, kept.append)
        figures["reset_s"] = round(time.perf_counter() - started, 3)
        figures["observation"] = describe_value(obs)
        space = getattr(env, "action_space", None)
        figures["action_space"] = _space(space)
        stage, rng, taken = enter("step"), np.random.default_rng(0), 0
        started = time.perf_counter()
        for _ in range(steps):
            action = _random_action(space, rng)
            if action is None:
                break  # no bounds to draw an action from: the eval's policy will say what it sends
            outcome = step_outcome(step_alone(env, action), env, spec.name)
            obs = outcome.observation
            taken += 1
            check_metrics(getattr(benchmark, spec.hooks["check"])(env))
            if outcome.done:
                break
        figures["steps"] = taken
        if taken:
            figures["step_ms"] = round(1000 * (time.perf_counter() - started) / taken, 3)
        render = spec.declared.get("render")
        if render:
            stage = enter("render")
            _frame(env, obs, render, figures)
        failure = None
    except Exception as error:
        failure = _failure(error, stage)
    finally:
        for made in kept:
            close_env(made)
    return {"figures": figures, "failure": failure}


def main(arguments: list[str]) -> None:
    """`python -m seq.engine.deploy_check_episode RESULT_FILE REF_JSON`, in the benchmark's environment; the
    stage it reached is kept in RESULT_FILE.stage, for a process that dies before it can say."""
    from seq.engine.worker_lifecycle import enter_worker_limits

    enter_worker_limits()  # its memory limit and its volume, as a worker has them
    stage = Path(arguments[0] + ".stage")
    result = check_episode(json.loads(arguments[1]), on_stage=stage.write_text)
    with open(arguments[0], "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main(sys.argv[1:])
