"""Rotation conversions between quaternions, axis-angle, Euler angles and matrices, with explicit
conventions — always written out, never defaulted:

- `"quat_wxyz"` / `"quat_xyzw"`: a quaternion, scalar first (MuJoCo, robosuite's `T.mat2quat` is
  xyzw) or scalar last (scipy, ROS). Quaternions seq produces are unit length with w ≥ 0.
- `"axis_angle"`: a rotation vector r = θ·u (θ = |r| radians about the unit axis u).
- `"euler_xyz"`: three angles in radians about the axes named; lowercase letters are extrinsic
  (fixed axes: R = R_z(γ) R_y(β) R_x(α) for "xyz"), uppercase intrinsic (moving axes: R = R_X(α)
  R_Y(β) R_Z(γ) for "XYZ") — scipy's convention. All 12 sequences (xyz, zyx, zxz, …).
- `"matrix"`: a 3×3 rotation matrix (last two axes), acting on column vectors.

Only reordering a quaternion's components is lossless; every other conversion is labelled lossy
with what it cannot keep (a quaternion's sign, a rotation vector's turns beyond π, Euler angles'
range and gimbal lock).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.base import KeyTransform, Transform
from seq.tf.labels import Label, claimed, lossless, lossy
from seq.tf.spec import random_array

_LOSS = {
    "quat": "q and −q are one rotation and the quaternion is normalized, so its sign and length are not kept",
    "axis_angle": "a rotation vector longer than π comes back as its equivalent with an angle of at most π",
    "euler": "Euler angles come back in [−π, π], and at gimbal lock only their sum or difference is kept",
    "matrix": "a matrix that is not exactly a rotation comes back as a rotation",
}


def _format(text: str, where: str) -> str:
    if text in ("quat_wxyz", "quat_xyzw", "axis_angle", "matrix"):
        return text
    if isinstance(text, str) and text.startswith("euler_"):
        seq = text[len("euler_") :]
        if (
            len(seq) == 3
            and (seq.islower() or seq.isupper())
            and set(seq.lower()) <= set("xyz")
            and seq[0] != seq[1] != seq[2]
        ):
            return text
    raise SeqInputError(
        f"{where}: {text!r} is not a rotation format; use quat_wxyz, quat_xyzw, axis_angle, matrix "
        "or euler_<axes> such as euler_xyz (extrinsic) or euler_XYZ (intrinsic)."
    )


def _multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product of wxyz quaternions."""
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)
    v = pw * qv + qw * pv + np.cross(pv, qv)
    return np.concatenate([w, v], axis=-1)


def _canonical(q: np.ndarray) -> np.ndarray:
    """Unit length, w ≥ 0."""
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("a zero quaternion is no rotation.")
    q = q / norm
    return np.where(q[..., :1] < 0, -q, q)


def quat_from_axis_angle(r: np.ndarray) -> np.ndarray:
    """q = (cos θ/2, sin(θ/2)·r/θ), θ = |r|; sin(θ/2)/θ → 1/2 − θ²/48 near 0."""
    theta = np.linalg.norm(r, axis=-1, keepdims=True)
    small = theta < 1e-6
    factor = np.where(small, 0.5 - theta**2 / 48, np.sin(theta / 2) / np.where(small, 1.0, theta))
    return _canonical(np.concatenate([np.cos(theta / 2), r * factor], axis=-1))


def axis_angle_from_quat(q: np.ndarray) -> np.ndarray:
    """θ = 2·atan2(|v|, w) in [0, π] (w ≥ 0 first), r = θ·v/|v|; θ/|v| → 2/w near 0."""
    q = _canonical(q)
    w, v = q[..., :1], q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    small = s < 1e-6
    theta = 2 * np.arctan2(s, w)
    factor = np.where(small, 2 / w * (1 + s**2 / (3 * w**2)), theta / np.where(small, 1.0, s))
    return v * factor


def _euler_axes(sequence: str) -> tuple[list[int], bool]:
    return ["xyz".index(a) for a in sequence.lower()], sequence.islower()


def quat_from_euler(angles: np.ndarray, sequence: str) -> np.ndarray:
    """Extrinsic "abc": q = q_c(γ) ⊗ q_b(β) ⊗ q_a(α); intrinsic "ABC": q = q_a(α) ⊗ q_b(β) ⊗ q_c(γ)."""
    axes, extrinsic = _euler_axes(sequence)
    parts = []
    for index, axis in enumerate(axes):
        half = angles[..., index : index + 1] / 2
        q = np.zeros((*angles.shape[:-1], 4))
        q[..., :1] = np.cos(half)
        q[..., 1 + axis : 2 + axis] = np.sin(half)
        parts.append(q)
    first, second, third = parts
    q = (
        _multiply(_multiply(third, second), first)
        if extrinsic
        else _multiply(_multiply(first, second), third)
    )
    return _canonical(q)


def euler_from_quat(q: np.ndarray, sequence: str) -> np.ndarray:
    """Bernardes & Viollet (2022), as scipy computes it: angles in [−π, π]; at gimbal lock the
    third angle is set to 0."""
    q = _canonical(q)
    axes, extrinsic = _euler_axes(sequence)
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    proper = i == k
    if proper:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    w, v = q[..., 0], q[..., 1:]
    if proper:
        a, b, c, d = w, v[..., i], v[..., j], v[..., k] * sign
    else:
        a, b, c, d = w - v[..., j], v[..., i] + v[..., k] * sign, v[..., j] + w, v[..., k] * sign - v[..., i]
    middle = 2 * np.arctan2(np.hypot(c, d), np.hypot(a, b))
    half_sum, half_diff = np.arctan2(b, a), np.arctan2(d, c)
    eps = 1e-7
    at_zero, at_pi = np.abs(middle) <= eps, np.abs(middle - np.pi) <= eps
    first = np.where(
        at_zero, 2 * half_sum, np.where(at_pi, 2 * half_diff * (-1 if extrinsic else 1), half_sum - half_diff)
    )
    third = np.where(at_zero | at_pi, 0.0, half_sum + half_diff)
    if not proper:
        third = third * sign
        middle = middle - np.pi / 2
    if not extrinsic:
        first, third = third, first
    angles = np.stack([first, middle, third], axis=-1)
    return np.where(angles < -np.pi, angles + 2 * np.pi, np.where(angles > np.pi, angles - 2 * np.pi, angles))


def matrix_from_quat(q: np.ndarray) -> np.ndarray:
    q = _canonical(q)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """Shepperd's method: from the largest of w², x², y², z², read off the matrix."""
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    choice = np.argmax(np.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1), axis=-1)
    q = np.empty((*m.shape[:-2], 4))
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        mask = choice == i
        q[mask, 1 + i] = 1 - trace[mask] + 2 * m[mask][..., i, i]
        q[mask, 1 + j] = m[mask][..., j, i] + m[mask][..., i, j]
        q[mask, 1 + k] = m[mask][..., k, i] + m[mask][..., i, k]
        q[mask, 0] = m[mask][..., k, j] - m[mask][..., j, k]
    mask = choice == 3
    q[mask, 0] = 1 + trace[mask]
    q[mask, 1] = m[mask][..., 2, 1] - m[mask][..., 1, 2]
    q[mask, 2] = m[mask][..., 0, 2] - m[mask][..., 2, 0]
    q[mask, 3] = m[mask][..., 1, 0] - m[mask][..., 0, 1]
    return _canonical(q)


def to_quat(value: np.ndarray, source: str) -> np.ndarray:
    """Any format to a unit wxyz quaternion with w ≥ 0."""
    if source == "quat_wxyz":
        return _canonical(value)
    if source == "quat_xyzw":
        return _canonical(np.roll(value, 1, axis=-1))
    if source == "axis_angle":
        return quat_from_axis_angle(value)
    if source == "matrix":
        return quat_from_matrix(value)
    return quat_from_euler(value, source[len("euler_") :])


def from_quat(q: np.ndarray, target: str) -> np.ndarray:
    """A unit wxyz quaternion to any format."""
    if target == "quat_wxyz":
        return _canonical(q)
    if target == "quat_xyzw":
        return np.roll(_canonical(q), -1, axis=-1)
    if target == "axis_angle":
        return axis_angle_from_quat(q)
    if target == "matrix":
        return matrix_from_quat(q)
    return euler_from_quat(q, target[len("euler_") :])


def _family(fmt: str) -> str:
    return "quat" if fmt.startswith("quat") else "euler" if fmt.startswith("euler") else fmt


def _size(fmt: str) -> int:
    """How many values one rotation takes in a vector format."""
    return 4 if fmt.startswith("quat") else 3


class Rotation(KeyTransform):
    """Convert a rotation from one format to another (see the module's conventions); with `part`,
    only entries `start:stop` of the last axis are converted (an action's rotation, say)."""

    def __init__(
        self, key: str | None, source: str, target: str, part: tuple[int, int] | None, reason: str | None
    ) -> None:
        self.source, self.target, self.part = source, target, part
        reorder = {source, target} == {"quat_wxyz", "quat_xyzw"}
        default: Label = lossless if reorder else lossy(_LOSS[_family(source)])
        super().__init__(key, claimed(default, reason))

    @property
    def name(self) -> str:
        key = "" if self.key is None else f"{self.key!r}, "
        part = "" if self.part is None else f"[{self.part[0]}:{self.part[1]}]"
        return f"rotation({key}{self.source}{part} → {self.target})"

    def _convert(self, value: Any, source: str, target: str) -> np.ndarray:
        array = np.asarray(value)
        if array.dtype.kind != "f":
            array = array.astype(np.float64)
        before = after = None
        if self.part is not None:
            start, stop = self.part
            before, array, after = array[..., :start], array[..., start:stop], array[..., stop:]
        if source == "matrix":
            if array.shape[-2:] != (3, 3):
                raise ValueError(f"{self.name}: expected 3x3 matrices, got shape {array.shape}.")
        elif array.shape[-1:] != (_size(source),):
            raise ValueError(
                f"{self.name}: expected {_size(source)} values for {source}, got shape {array.shape}."
            )
        if {source, target} == {"quat_wxyz", "quat_xyzw"}:
            out = np.roll(array, 1 if source == "quat_xyzw" else -1, axis=-1)
        else:
            out = from_quat(to_quat(array.astype(np.float64), source), target).astype(array.dtype)
        if before is not None:
            out = np.concatenate([before, out, after], axis=-1)
        return out

    def forward(self, value: Any) -> np.ndarray:
        return self._convert(value, self.source, self.target)

    def backward(self, value: Any) -> np.ndarray:
        if self.label.lossy:  # type: ignore[union-attr]
            raise NotImplementedError(f"{self.name} has no inverse ({self.label}).")
        return self._convert(value, self.target, self.source)

    def invertible(self) -> bool:
        return not self.label.lossy  # type: ignore[union-attr]

    def examples(self, rng: np.random.Generator) -> list[Any]:
        if self.source not in ("quat_wxyz", "quat_xyzw"):
            return []
        return [self.keyed(random_array(rng, (2, 4), "float64"))]


def rotation(
    key: str | None,
    source: str,
    target: str,
    *,
    part: tuple[int, int] | None = None,
    lossy: str | None = None,
) -> Transform:
    """`rotation("eef_quat", "quat_xyzw", "axis_angle")`; on an action, `rotation(None,
    "axis_angle", "euler_xyz", part=(3, 6))` converts entries 3:6 only. Formats: quat_wxyz,
    quat_xyzw, axis_angle, matrix, euler_<axes> (lowercase extrinsic, uppercase intrinsic)."""
    source, target = _format(source, "seq.tf.rotation"), _format(target, "seq.tf.rotation")
    if source == target:
        raise SeqInputError(f"seq.tf.rotation: source and target are both {source!r}; nothing to convert.")
    if part is not None:
        if "matrix" in (source, target):
            raise SeqInputError("seq.tf.rotation: part= converts part of a vector; a matrix is not one.")
        if len(part) != 2 or not all(isinstance(p, int) for p in part) or not 0 <= part[0] < part[1]:
            raise SeqInputError(f"seq.tf.rotation: part= is (start, stop) of the last axis, got {part!r}.")
        if part[1] - part[0] != _size(source):
            raise SeqInputError(
                f"seq.tf.rotation: part={part!r} holds {part[1] - part[0]} values, "
                f"and {source} has {_size(source)}."
            )
        part = (int(part[0]), int(part[1]))
    return Rotation(key, source, target, part, lossy)
