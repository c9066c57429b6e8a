"""The port commands refuse what they cannot port in one line, before any environment is built."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import refused_in_one_line, run_cli
from scenes import BALL

import seq


def test_a_folder_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    for command in (("check-model", str(tmp_path)), ("scaffold", str(tmp_path)),
                    ("compare", "--replay", str(tmp_path))):
        refused_in_one_line(run_cli("benchmark", *command), str(tmp_path), "not an exported scene")


def test_a_benchmark_without_mujoco_is_refused_naming_its_task(toy_file: Path, tmp_path: Path) -> None:
    result = run_cli("benchmark", "export", f"{toy_file}:Line", "--seeds", "0", "-o", str(tmp_path / "s"))
    refused_in_one_line(result, "no MuJoCo model and data were found", "task near")


def test_export_will_not_write_over_other_files(toy_file: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    refused_in_one_line(run_cli("benchmark", "export", f"{toy_file}:Line", "-o", str(tmp_path)),
                        f"--output {tmp_path}: exists and holds other files")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_unknown_tasks_and_files_are_refused(toy_file: Path, tmp_path: Path) -> None:
    refused_in_one_line(run_cli("benchmark", "export", f"{toy_file}:Line", "--tasks", "nowhere"), "'nowhere'")
    refused_in_one_line(run_cli("benchmark", "export", str(tmp_path / "none.py")), "no such file")
    refused_in_one_line(run_cli("benchmark", "export", f"{toy_file}:Nope"), "no @seq.benchmark class 'Nope'")


def test_the_seeded_controls_are_the_same_everywhere_and_smooth() -> None:
    from seq.port.controls import seeded_controls

    ranges, limited = np.array([[-1.0, 1.0], [0.0, 0.04]]), np.array([True, True])
    first = seeded_controls(3, 200, ranges, limited, nmocap=1)
    again = seeded_controls(3, 200, ranges, limited, nmocap=1)
    assert np.array_equal(first.ctrl, again.ctrl) and np.array_equal(first.mocap_offset, again.mocap_offset)
    assert not np.array_equal(first.ctrl, seeded_controls(4, 200, ranges, limited, 1).ctrl)
    assert first.ctrl.shape == (200, 2) and first.mocap_offset.shape == (200, 1, 3)
    assert (first.ctrl[:, 1] >= 0.01).all() and (first.ctrl[:, 1] <= 0.03).all()  # the middle half
    assert np.abs(np.diff(first.ctrl[:, 0])).max() < 0.1  # no jumps: a knot every 20 steps
    assert seq.port.compare_replay is not None


@pytest.mark.parametrize(("flags", "said"), [
    (("--atol", "nan"), "--atol must be a finite number of 0 or more, got nan"),
    (("--atol", "inf"), "--atol must be a finite number of 0 or more, got inf"),
    (("--atol", "-1"), "--atol must be a finite number of 0 or more, got -1.0"),
    (("--steps", "0"), "--steps must be between 1 and 20 (the export's run), got 0"),
    (("--steps", "21"), "--steps must be between 1 and 20 (the export's run), got 21"),
    (("--conditions", "0"), "--conditions must be 1 or more, got 0"),
])
def test_replay_refuses_a_tolerance_or_count_it_cannot_hold_a_port_to(
    ball_scene: Path, flags: tuple[str, str], said: str
) -> None:
    """Before the port environment starts: `--atol nan` would make every gap pass."""
    for port in ((), (str(ball_scene),)):
        refused_in_one_line(run_cli("benchmark", "compare", "--replay", str(ball_scene), *port, *flags), said)
    with pytest.raises(seq.SeqInputError, match="--atol"):
        seq.port.compare_replay(ball_scene, atol=float("nan"))


@pytest.mark.parametrize("target", ["metaworld", "BALL"])
@pytest.mark.parametrize(("flag", "value"), [("--steps", "-5"), ("--steps", "0")])
def test_export_refuses_counts_below_one(target: str, flag: str, value: str, tmp_path: Path) -> None:
    if target == "BALL":
        target = str(tmp_path / "ball_bench.py")
        Path(target).write_text(BALL)
    out = tmp_path / "scene"
    refused_in_one_line(run_cli("benchmark", "export", target, flag, value, "-o", str(out)),
                        f"{flag} must be 1 or more, got {value}")
    assert not out.exists()


def test_export_names_a_file_that_does_not_import(tmp_path: Path) -> None:
    broken = tmp_path / "syntax.py"
    broken.write_text("import seq\n\n\ndef oops(:\n    pass\n")
    refused_in_one_line(run_cli("benchmark", "export", str(broken)), f"{broken}:4: syntax error")
    raising = tmp_path / "raising.py"
    raising.write_text("import seq\n\nraise RuntimeError('no robot here')\n")
    refused_in_one_line(run_cli("benchmark", "export", f"{raising}:Ball"),
                        f"{raising}: importing it raised RuntimeError: no robot here")
