"""Rotation conversions agree with scipy's, in every stated convention."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import seq

SEQUENCES = ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx", "xyx", "xzx", "yxy", "yzy", "zxz", "zyz"]
R = Rotation.random(50, random_state=1)


def _same_rotation(q1, q2):
    """Unit quaternions (wxyz) of the same rotation: equal up to sign."""
    return np.allclose(np.abs(np.sum(q1 * q2, axis=-1)), 1.0, atol=1e-9)


def _convert(source, target, value, **kw):
    return seq.tf.rotation(None, source, target, **kw).apply(value)


def test_quaternion_orders():
    xyzw = R.as_quat()
    wxyz = _convert("quat_xyzw", "quat_wxyz", xyzw)
    assert np.array_equal(wxyz, np.roll(xyzw, 1, axis=-1))
    assert np.array_equal(_convert("quat_wxyz", "quat_xyzw", wxyz), xyzw)


def test_axis_angle_both_ways():
    wxyz = np.roll(R.as_quat(), 1, axis=-1)
    assert np.allclose(_convert("quat_wxyz", "axis_angle", wxyz), R.as_rotvec(), atol=1e-12)
    assert _same_rotation(_convert("axis_angle", "quat_wxyz", R.as_rotvec()), wxyz)
    tiny = np.array([1e-9, -2e-9, 3e-10])
    assert np.allclose(
        _convert("quat_wxyz", "axis_angle", _convert("axis_angle", "quat_wxyz", tiny)), tiny, rtol=1e-6
    )


@pytest.mark.parametrize("sequence", SEQUENCES + [s.upper() for s in SEQUENCES])
def test_euler_both_ways_in_every_sequence(sequence):
    wxyz = np.roll(R.as_quat(), 1, axis=-1)
    angles = _convert("quat_wxyz", f"euler_{sequence}", wxyz)
    assert np.allclose(angles, R.as_euler(sequence), atol=1e-9)
    assert _same_rotation(_convert(f"euler_{sequence}", "quat_wxyz", R.as_euler(sequence)), wxyz)


def test_matrix_both_ways_and_quaternions_come_out_canonical():
    wxyz = np.roll(R.as_quat(), 1, axis=-1)
    assert np.allclose(_convert("quat_wxyz", "matrix", wxyz), R.as_matrix(), atol=1e-12)
    back = _convert("matrix", "quat_wxyz", R.as_matrix())
    assert _same_rotation(back, wxyz) and np.all(back[:, 0] >= 0)


def test_part_converts_only_an_actions_rotation():
    action = np.concatenate([[0.1, 0.2, 0.3], R.as_rotvec()[0], [-1.0]])
    out = _convert("axis_angle", "euler_xyz", action, part=(3, 6))
    assert out.shape == (7,) and np.array_equal(out[:3], action[:3]) and out[6] == -1.0
    assert np.allclose(out[3:6], R[0].as_euler("xyz"))


def test_a_wrong_size_is_an_error_naming_the_format():
    with pytest.raises(ValueError, match="expected 4 values for quat_wxyz"):
        _convert("quat_wxyz", "axis_angle", np.zeros(3))
