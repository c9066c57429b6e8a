"""Compressed images on the wire: JPEG out, JPEG or PNG in, with a pixel budget per frame.

A PNG or JPEG of a few kilobytes can declare 9000 × 9000 pixels and decode to a quarter of a
gigabyte. So before an image is decoded its header is read (Pillow parses only the header on
`open`) and its width × height × frames is charged to the frame's `PixelBudget`; an image over
what is left is refused, undecoded, as a `CodecError`. Decoded images are writable arrays that the
receiver owns.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from seq.serving.remote_errors import CodecError

MAX_FRAME_PIXELS = 2**25  # about 33.5 million: a dozen 1080p cameras, 1,000 of 224 × 224, in one frame
FORMATS = ("JPEG", "PNG")  # what a peer may send compressed; nothing else reaches a decoder


class PixelBudget:
    """The pixels the images of one frame may still decode to."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int = MAX_FRAME_PIXELS) -> None:
        self.limit = self.left = limit

    def charge(self, width: int, height: int, frames: int) -> None:
        pixels = width * height * frames
        if pixels > self.left:
            raise CodecError(
                f"an image of {width} x {height} pixels x {frames} frame(s) is over the pixel budget "
                f"of {self.limit:,} per frame ({self.limit - self.left:,} already decoded in it)."
            )
        self.left -= pixels


def is_image(array: np.ndarray) -> bool:
    """A uint8 `[H, W, C]` array with 1 or 3 channels: what JPEG can carry."""
    return array.dtype == np.uint8 and array.ndim == 3 and array.shape[2] in (1, 3)


def jpeg_bytes(image: np.ndarray, quality: int) -> bytes:
    """A uint8 `[H, W, 1|3]` image as JPEG bytes."""
    from PIL import Image  # optional: only when a sender asks for JPEG

    pil = Image.fromarray(image[:, :, 0] if image.shape[2] == 1 else image)
    buffer = io.BytesIO()
    pil.save(buffer, format="JPEG", quality=int(quality))
    return buffer.getvalue()


def _open(data: bytes) -> Any:
    """The image in `data`, its header read and its pixels not yet decoded."""
    from PIL import Image

    try:
        return Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError as error:
        raise CodecError(f"an image was refused before decoding: {error}") from None
    except Exception as error:
        raise CodecError(f"an image could not be read (JPEG and PNG are accepted): {error}") from None


def check_image(data: bytes, budget: PixelBudget) -> None:
    """Charge a compressed image's declared size to `budget` without decoding it."""
    image = _open(data)
    budget.charge(image.width, image.height, getattr(image, "n_frames", 1))


def jpeg_array(data: bytes, channels: int | None = None, budget: PixelBudget | None = None) -> np.ndarray:
    """A JPEG or PNG decoded to a writable uint8 array `[H, W, C]` (`[H, W, 1]` for grey or
    `channels=1`), after its header passed `budget` (a budget of its own when None)."""
    image = _open(data)
    (budget or PixelBudget()).charge(image.width, image.height, getattr(image, "n_frames", 1))
    try:
        array = np.array(image)  # a copy the receiver owns (np.asarray would be read-only)
    except Exception as error:
        raise CodecError(f"an image could not be decoded: {error}") from None
    return array[:, :, None] if array.ndim == 2 or channels == 1 else array
