"""The seeded controls a replay drives a scene with: the same numbers on every engine.

Controls are smooth (piecewise linear between knots every `KNOT_STEPS` steps), so that a
difference in the motion is a difference in the physics, not float rounding amplified by jerks.
Actuators get values in the middle half of their control range (an unlimited one's is [-1, 1]):
far enough to move a link, not so far that an arm is flung into its limits (where float32 and
float64 part ways sooner); each
mocap body (MetaWorld drives its arm by one) wanders around where it started by a few centimetres.
numpy only: the benchmark's environment and the port's compute them alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KNOT_STEPS = 20
MOCAP_SIGMA_M = 0.01
DEFAULT_STEPS = 200


@dataclass(frozen=True)
class Controls:
    ctrl: np.ndarray  # (steps, nu): actuator inputs
    mocap_offset: np.ndarray  # (steps, nmocap, 3): added to each mocap body's start position


def seeded_controls(
    seed: int, steps: int, ctrlrange: np.ndarray, ctrllimited: np.ndarray, nmocap: int
) -> Controls:
    """`steps` controls for a model with these actuator ranges and `nmocap` mocap bodies."""
    rng = np.random.default_rng([seed, 2026])
    knots = np.arange(0, steps + KNOT_STEPS, KNOT_STEPS)
    nu = len(ctrlrange)
    low = np.where(ctrllimited, ctrlrange[:, 0], -1.0) if nu else np.zeros(0)
    high = np.where(ctrllimited, ctrlrange[:, 1], 1.0) if nu else np.zeros(0)
    middle, half = (low + high) / 2, (high - low) / 4
    ctrl_knots = middle + half * rng.uniform(-1.0, 1.0, (len(knots), nu))
    mocap_knots = rng.normal(0.0, MOCAP_SIGMA_M, (len(knots), nmocap * 3))
    mocap_knots[0] = 0.0  # every mocap body starts where the start put it
    return Controls(
        ctrl=_interpolate(knots, ctrl_knots, steps),
        mocap_offset=_interpolate(knots, mocap_knots, steps).reshape(steps, nmocap, 3),
    )


def controls_for(model: object, seed: int, steps: int) -> Controls:
    """`seeded_controls` for a compiled `mujoco.MjModel` (any MuJoCo version)."""
    return seeded_controls(
        seed,
        steps,
        np.asarray(model.actuator_ctrlrange, dtype=np.float64).reshape(-1, 2),  # type: ignore[attr-defined]
        np.asarray(model.actuator_ctrllimited, dtype=bool),  # type: ignore[attr-defined]
        int(model.nmocap),  # type: ignore[attr-defined]
    )


def _interpolate(knots: np.ndarray, values: np.ndarray, steps: int) -> np.ndarray:
    at = np.arange(1, steps + 1)  # the control of step t is where the signal is after t steps
    if values.shape[1] == 0:
        return np.zeros((steps, 0))
    return np.stack([np.interp(at, knots, values[:, j]) for j in range(values.shape[1])], axis=1)
