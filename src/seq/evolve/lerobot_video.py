"""A LeRobot v3.0 video feature: the hard cases' recordings, one after another, in one H.264 file.

Each episode's recording (`seq.evolve.recordings`: a frame at reset and one after every step) is
decoded and its first `length` frames (the observations each row's action was chosen from) are
appended to `videos/<key>/chunk-000/file-000.mp4` with `seq.capture.mp4`, the project's encoder.
Row `i` of an episode is then the video's frame at `from_timestamp + i / fps`, as LeRobot's
reader looks it up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from seq.capture.mp4 import Mp4Writer, read_video
from seq.errors import SeqInputError
from seq.evolve.recordings import video_info, video_key

VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"


class LerobotVideo:
    """One camera's video file of the dataset, written episode by episode."""

    def __init__(self, root: Path, camera: str | None) -> None:
        self.key = video_key(camera)
        self.path = root / VIDEO_PATH.format(video_key=self.key, chunk_index=0, file_index=0)
        self.fps: int | None = None
        self.size: tuple[int, int] = (0, 0)
        self.frames = 0
        self._writer: Mp4Writer | None = None
        self._low = np.full(3, np.inf)
        self._high = np.full(3, -np.inf)
        self._sum = np.zeros(3)
        self._squares = np.zeros(3)

    def add(self, recording: str | Path, length: int) -> dict[str, Any]:
        """Append the first `length` frames of `recording`; the episode's video columns."""
        meta, frames = read_video(recording)
        fps = round(meta["fps"])
        if fps > 1000:
            raise SeqInputError(
                f"{recording}: the env does not say its control rate (metadata['render_fps'] or dt), "
                "so its video has no frame rate to give the dataset; --no-videos exports without."
            )
        if abs(meta["fps"] - fps) > 1e-6:
            raise SeqInputError(
                f"{recording}: plays at {meta['fps']} fps; LeRobot needs whole frames per second."
            )
        if len(frames) < length:
            raise SeqInputError(
                f"{recording}: {len(frames)} frames for {length} steps; the export needs one frame per step."
            )
        if self._writer is None:
            self.fps, self.size = fps, (frames[0].shape[0], frames[0].shape[1])
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = Mp4Writer(self.path, fps, self.size[1], self.size[0])
        if fps != self.fps or frames[0].shape[:2] != self.size:
            raise SeqInputError(
                f"{recording}: {fps} fps, {frames[0].shape[:2]}; the first was {self.fps}, {self.size}."
            )
        start = self.frames
        for pixels in frames[:length]:
            self._writer.write(pixels)
            values = pixels.reshape(-1, 3).astype(np.float64) / 255.0
            self._low = np.minimum(self._low, values.min(0))
            self._high = np.maximum(self._high, values.max(0))
            self._sum += values.mean(0)
            self._squares += (values**2).mean(0)
        self.frames += length
        prefix = f"videos/{self.key}/"
        return {
            prefix + "chunk_index": 0,
            prefix + "file_index": 0,
            prefix + "from_timestamp": start / fps,
            prefix + "to_timestamp": self.frames / fps,
        }

    def close(self) -> int:
        """Finish the file; the dataset's frames per second."""
        assert self._writer is not None and self.fps is not None
        self._writer.close()
        return self.fps

    def feature(self) -> dict[str, Any]:
        """The feature's entry in `meta/info.json`."""
        assert self.fps is not None
        height, width = self.size
        return {
            "dtype": "video",
            "shape": [height, width, 3],
            "names": ["height", "width", "channels"],
            "info": video_info(height, width, self.fps),
        }

    def stats(self) -> dict[str, Any]:
        """Per-channel statistics of the pixels in [0, 1], shaped (3, 1, 1) as LeRobot keeps them."""
        mean = self._sum / max(self.frames, 1)
        std = np.sqrt(np.maximum(self._squares / max(self.frames, 1) - mean**2, 0.0))

        def shaped(values: np.ndarray) -> list[Any]:
            return values.reshape(3, 1, 1).tolist()

        return {
            "min": shaped(self._low),
            "max": shaped(self._high),
            "mean": shaped(mean),
            "std": shaped(std),
            "count": [self.frames],
        }
