"""The one mp4 codec: frames written in this process read back with their size, rate and content."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")

from seq.capture.mp4 import Mp4Writer, read_video  # noqa: E402


def gradient(shift: int, height: int = 48, width: int = 64) -> np.ndarray:
    rows, cols = np.mgrid[0:height, 0:width]
    image = np.stack([(cols * 4 + shift) % 256, rows * 5, np.full_like(rows, 128)], axis=-1)
    return image.astype(np.uint8)


def test_frames_round_trip_at_a_fractional_rate(tmp_path: Path):
    path = tmp_path / "clip.mp4"
    writer = Mp4Writer(path, fps=80 / 6, width=64, height=48)
    written = [gradient(8 * i) for i in range(17)]
    for image in written:
        writer.write(image)
    writer.close()
    meta, frames = read_video(path)
    assert meta["size"] == (64, 48) and meta["codec"] == "h264" and len(frames) == 17
    assert abs(meta["fps"] - 80 / 6) < 1e-3
    errors = [np.abs(a.astype(int) - b.astype(int)).mean() for a, b in zip(frames, written, strict=True)]
    assert max(errors) < 6  # lossy, but the same pictures in the same order


def test_a_frame_of_another_size_and_odd_sides_are_refused(tmp_path: Path):
    writer = Mp4Writer(tmp_path / "a.mp4", fps=20, width=64, height=48)
    writer.write(gradient(0))
    with pytest.raises(ValueError, match=r"frame 1 is \(32, 32\)"):
        writer.write(gradient(0, 32, 32))
    writer.abort()
    with pytest.raises(ValueError, match="even sides"):
        Mp4Writer(tmp_path / "b.mp4", fps=20, width=63, height=48)
