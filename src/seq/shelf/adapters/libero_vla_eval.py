"""`libero-to-vla-eval`: the `libero` benchmark's observation and episode as vla-eval's LIBERO
benchmark (`vla_eval.benchmarks.libero`) sends them, so a vla-eval LIBERO model server (one that
reads `obs["images"]["agentview"]`, `obs["states"]`) runs unchanged:

    seq eval run --benchmark libero --policy-url ws://HOST:8000 --policy-protocol vla-eval \\
        --adapter libero-to-vla-eval

What vla-eval sends, and what this sends from seq's observation:
- `images`: `{"agentview", "wrist"}`, 256² uint8, upright (seq's images already are; vla-eval
  flips robosuite's the same way). `send_wrist_image=False` leaves the wrist out.
- `states`: float64 [8], the end-effector position, its orientation as an axis-angle rounded to
  float32, the two finger positions. The axis-angle is vla-eval's `quat_to_axisangle` (the
  quaternion's sign made positive first) unless `quat_no_antipodal=True` (robosuite's formula, as
  seq's own `state` and openpi's client use).
- `controller_states`: float32 [8], the controller's position, its rotation as an axis-angle (via
  a quaternion, sign made positive) and the finger positions, all in float32.
- `task_description`: the instruction (seq's vla-eval client adds it to every observation).
- The episode's start: the task's `name` is its instruction, `task_id` its position in the suite.
- Actions: the gripper command made -1 below 0, else +1 (`discretize_gripper`), as vla-eval's
  benchmark does before stepping LIBERO.

Lossy: the float32 roundings (the axis-angle in `states`, all of `controller_states`), the
gripper's discretisation, and the keys vla-eval does not send (seq's `state`, `eef_quat`,
`controller_pose`). Not lossy: the sign of the quaternion (q and -q are one rotation) and the
images, passed as they are.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import seq
from seq import tf


def axis_angle_positive(quat: np.ndarray) -> np.ndarray:
    """vla-eval's `quat_to_axisangle`: `[x, y, z, w]` → axis-angle, float32, the sign of `w` made
    positive first."""
    q = -quat if quat[3] < 0 else quat.copy()
    w = float(np.clip(q[3], -1.0, 1.0))
    sin_half = np.sqrt(1.0 - w * w)
    if sin_half < 1e-8:
        return np.zeros(3, dtype=np.float32)
    angle = 2.0 * np.arccos(w)
    return (q[:3] / sin_half * angle).astype(np.float32)


def axis_angle_robosuite(quat: np.ndarray) -> np.ndarray:
    """robosuite's `quat2axisangle` as vla-eval's `quat_no_antipodal` computes it, float32."""
    q = quat.copy()
    q[3] = min(max(q[3], -1.0), 1.0)
    den = np.sqrt(1.0 - q[3] * q[3])
    if math.isclose(den, 0.0):
        return np.zeros(3, dtype=np.float32)
    return (q[:3] * 2.0 * math.acos(q[3]) / den).astype(np.float32)


def matrix_to_quat(mat: np.ndarray) -> np.ndarray:
    """A rotation matrix → `[x, y, z, w]` (Shepperd's method), as vla-eval's `matrix_to_quat`."""
    m = np.asarray(mat, dtype=np.float64)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * np.sqrt(trace + 1.0)
        w, x = 0.25 * s, (m[2, 1] - m[1, 2]) / s
        y, z = (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        w, x = (m[2, 1] - m[1, 2]) / s, 0.25 * s
        y, z = (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        w, x = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s
        y, z = 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        w, x = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s
        y, z = (m[1, 2] + m[2, 1]) / s, 0.25 * s
    return np.array([x, y, z, w])


def _vla_eval_layout(wrist: bool, state: bool, quat_no_antipodal: bool) -> tf.Transform:
    to_axis_angle = axis_angle_robosuite if quat_no_antipodal else axis_angle_positive

    def apply(obs: dict[str, Any]) -> dict[str, Any]:
        images = {"agentview": obs["agentview_image"]}
        if wrist:
            images["wrist"] = obs["wrist_image"]
        sent: dict[str, Any] = {"images": images}
        if "task_description" in obs:
            sent["task_description"] = obs["task_description"]
        if state:
            ours = np.asarray(obs["state"], dtype=np.float64)
            quat = np.asarray(obs["eef_quat"], dtype=np.float64)
            sent["states"] = np.concatenate([ours[:3], to_axis_angle(quat), ours[6:8]])
            pose = np.asarray(obs["controller_pose"])
            position = pose[:3].astype(np.float32)
            rotation = pose[3:12].reshape(3, 3).astype(np.float32)
            fingers = ours[6:8].astype(np.float32)
            turned = axis_angle_positive(matrix_to_quat(rotation))
            sent["controller_states"] = np.concatenate([position, turned, fingers])
        return sent

    reason = (
        "vla-eval's LIBERO layout: axis-angles and controller_states rounded to float32; "
        "seq's state, eef_quat and controller_pose not sent"
    )
    return tf.custom(apply, label=tf.lossy(reason), name="vla-eval LIBERO observation")


def _discretize_gripper(action: Any) -> np.ndarray:
    action = np.array(action, dtype=np.float64)
    action[-1] = -1.0 if action[-1] < 0 else 1.0
    return action


def _name_is_instruction(episode: dict[str, Any]) -> dict[str, Any]:
    return {**episode, "task": episode.get("instruction") or episode.get("task")}


@seq.adapter(name="libero-to-vla-eval")
class LiberoToVlaEval(seq.Adapter):
    """The `libero` benchmark's observation and episode → vla-eval's LIBERO ones (module doc)."""

    observation_spec = {
        "agentview_image": ((256, 256, 3), "uint8"),
        "wrist_image": ((256, 256, 3), "uint8"),
        "state": ((8,), "float64"),
        "eef_quat": ((4,), "float64"),
        "controller_pose": ((12,), "float64"),
    }
    action_spec = (7,)

    def __init__(
        self,
        *,
        send_wrist_image: bool = True,
        send_state: bool = True,
        quat_no_antipodal: bool = False,
        discretize_gripper: bool = True,
    ) -> None:
        self.obs_transforms = [_vla_eval_layout(send_wrist_image, send_state, quat_no_antipodal)]
        self.action_transforms = []
        if discretize_gripper:
            reason = "vla-eval's LIBERO benchmark makes the gripper command -1 below 0, else +1"
            self.action_transforms.append(
                tf.custom(_discretize_gripper, label=tf.lossy(reason), name="gripper to ±1")
            )
        reason = "vla-eval's LIBERO task is named by its instruction; seq's task name is not sent"
        self.episode_transforms = [
            tf.custom(_name_is_instruction, label=tf.lossy(reason), name="task named by its instruction")
        ]
