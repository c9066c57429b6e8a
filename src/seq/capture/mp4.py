"""H.264 mp4 files, written and read in this process with PyAV (FFmpeg's libraries).

In-process encoding costs a few milliseconds a video where starting an `ffmpeg` process for each
one cost ~40 ms of CPU, which on a busy CPU-only machine is eval time.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np


class Mp4Writer:
    """Appends `H×W×3` uint8 frames to an H.264 (yuv420p) mp4 at `fps` frames per second.

    `preset` and `tune` are x264's: the defaults favour encoding speed over file size, which at
    224² and a few hundred frames is small either way.
    """

    def __init__(
        self, path: str | Path, fps: float, width: int, height: int, preset: str = "superfast"
    ) -> None:
        import av

        if width % 2 or height % 2:
            raise ValueError(f"H.264 in yuv420p needs even sides, got {width}×{height}.")
        self.size = (height, width)
        self.frames = 0
        self._container = av.open(str(path), mode="w")
        self._stream = self._container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        self._stream.width, self._stream.height, self._stream.pix_fmt = width, height, "yuv420p"
        self._stream.options = {"preset": preset, "tune": "zerolatency"}
        self._stream.thread_count = 1  # the eval's workers already occupy every core
        self._frame_type = av.VideoFrame

    def write(self, pixels: np.ndarray) -> None:
        if pixels.shape[:2] != self.size:
            raise ValueError(f"frame {self.frames} is {pixels.shape[:2]}, the video's first was {self.size}.")
        frame = self._frame_type.from_ndarray(np.ascontiguousarray(pixels[..., :3]), format="rgb24")
        self._container.mux(self._stream.encode(frame))
        self.frames += 1

    def close(self) -> None:
        """Flushes the encoder and finishes the file."""
        try:
            self._container.mux(self._stream.encode(None))
        finally:
            self._container.close()

    def abort(self) -> None:
        """Closes the file without flushing (it is about to be deleted)."""
        try:
            self._container.close()
        except Exception:
            pass


def read_video(path: str | Path) -> tuple[dict[str, Any], list[np.ndarray]]:
    """An mp4's metadata (`fps`, `size` as `(width, height)`, `codec`) and every frame (H×W×3 uint8)."""
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        meta = {
            "fps": float(stream.average_rate or stream.guessed_rate or 0),
            "size": (stream.codec_context.width, stream.codec_context.height),
            "codec": stream.codec_context.name,
        }
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(stream)]
    return meta, frames
