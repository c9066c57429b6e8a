"""robosuite's operational-space controller (`OSC_POSE`), on any MuJoCo's state.

A ported robosuite benchmark (`lift-warp`, `libero-warp`) steps its worlds on MuJoCo Warp while
its arm is driven as robosuite drives it: before each physics step, the end effector's pose,
Jacobians, mass matrix and bias forces are read from classic MuJoCo on that world's state, and
the torques are robosuite's (`controllers/osc.py`, the same in 1.4 and 1.5): position and
orientation errors through critically damped gains, uncoupled through the operational-space
inertias, nullspace torques towards a posture with kp 10, plus `qfrc_bias`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

NULLSPACE_KP = 10.0


def orientation_error(desired: np.ndarray, current: np.ndarray) -> np.ndarray:
    """robosuite's: the rotation from `current` to `desired` (3×3), as a 3-vector (small angles)."""
    return 0.5 * np.sum([np.cross(current[:, i], desired[:, i]) for i in range(3)], axis=0)


def axis_angle_matrix(mujoco: Any, axis_angle: np.ndarray) -> np.ndarray:
    """The rotation matrix of an axis-angle vector (robosuite's `quat2mat(axisangle2quat(v))`)."""
    quat, matrix = np.zeros(4), np.zeros(9)
    angle = float(np.linalg.norm(axis_angle))
    if angle == 0.0:  # robosuite's test: exactly none
        return np.eye(3)
    mujoco.mju_axisAngle2Quat(quat, axis_angle / angle, angle)
    mujoco.mju_quat2Mat(matrix, quat)
    return matrix.reshape(3, 3)


def mass_matrix(mujoco: Any, model: Any, data: Any) -> np.ndarray:
    """The full joint-space inertia matrix (nv × nv) of `data`, after `mj_forward`."""
    full = np.zeros((model.nv, model.nv))
    if hasattr(data, "qM"):  # MuJoCo 3
        mujoco.mj_fullM(model, full, data.qM)
    else:  # MuJoCo 4 reads it from the data
        mujoco.mj_fullM(model, data, full)
    return full


def osc_torques(
    mujoco: Any,
    model: Any,
    data: Any,
    site: int,
    dofs: np.ndarray,
    addresses: np.ndarray,
    goal_pos: np.ndarray,
    goal_ori: np.ndarray,
    posture: np.ndarray,
    kp: np.ndarray | float = 150.0,
) -> np.ndarray:
    """The arm's torques (one per dof of `dofs`, its joints' indices into qvel; `addresses`, the
    same joints' into qpos) driving `site` to `goal_pos` and `goal_ori` (3×3), and the joints
    towards `posture` in the nullspace, on `data` after `mj_forward`; `kp`: robosuite's gains."""
    gains = np.broadcast_to(np.asarray(kp, dtype=np.float64), (6,))
    kd = 2.0 * np.sqrt(gains)
    jac_pos, jac_rot = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jacSite(model, data, jac_pos, jac_rot, site)
    jac_pos, jac_rot = jac_pos[:, dofs], jac_rot[:, dofs]
    jac = np.vstack([jac_pos, jac_rot])
    mass = mass_matrix(mujoco, model, data)[np.ix_(dofs, dofs)]
    joints, velocities = data.qpos[addresses], data.qvel[dofs]
    force = gains[:3] * (goal_pos - data.site_xpos[site]) - kd[:3] * (jac_pos @ velocities)
    ori = orientation_error(goal_ori, data.site_xmat[site].reshape(3, 3))
    torque = gains[3:] * ori - kd[3:] * (jac_rot @ velocities)
    inverse = np.linalg.inv(mass)
    lambda_pos = np.linalg.pinv(jac_pos @ inverse @ jac_pos.T)
    lambda_ori = np.linalg.pinv(jac_rot @ inverse @ jac_rot.T)
    lambda_full = np.linalg.pinv(jac @ inverse @ jac.T)
    nullspace = np.eye(len(velocities)) - inverse @ jac.T @ lambda_full @ jac
    wrench = np.concatenate([lambda_pos @ force, lambda_ori @ torque])
    torques = jac.T @ wrench + data.qfrc_bias[dofs]
    kv = 2.0 * np.sqrt(NULLSPACE_KP)
    pose = mass @ (NULLSPACE_KP * (posture - joints) - kv * velocities)
    return torques + nullspace.T @ pose
