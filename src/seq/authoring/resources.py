"""The resources a benchmark declares: `cpu=` workers, `memory=` for all of them, `gpu=` a card."""

from __future__ import annotations

import re
from typing import Any

from seq.errors import SeqInputError

_UNITS = {"": 2**20, "k": 2**10, "ki": 2**10, "m": 2**20, "mi": 2**20, "g": 2**30, "gi": 2**30}
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]i?)?[bB]?\s*$")


def parse_memory(value: Any, where: str) -> int:
    """Bytes from `memory=`: an integer of MiB (as Modal takes it) or a text like `"512MiB"`, `"2GiB"`."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise SeqInputError(
            f"{where}: memory= must be MiB as an integer or a text like '2GiB', got {value!r}."
        )
    if isinstance(value, int):
        number, unit = float(value), ""
    else:
        match = _MEMORY.match(value)
        if match is None:
            raise SeqInputError(
                f"{where}: memory={value!r} is not a size; expected e.g. 512 (MiB) or '2GiB'."
            )
        number, unit = float(match.group(1)), (match.group(2) or "").lower()
    size = int(number * _UNITS[unit])
    if size < 64 * 2**20:
        raise SeqInputError(f"{where}: memory={value!r} is under 64 MiB, too little for a Python worker.")
    return size


def memory_text(size: int) -> str:
    """`size` bytes as people read it: `512 MiB`, `2.5 GiB`."""
    if size >= 2**30:
        return f"{size / 2**30:.3g} GiB"
    return f"{size / 2**20:.4g} MiB"


def check_cpu(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SeqInputError(
            f"{where}: cpu= is the number of environment workers, a positive integer; got {value!r}."
        )
    return value


def check_gpu(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SeqInputError(f"{where}: gpu= names a card ('H100', 'any') or 'cpu'; got {value!r}.")
    return value.strip()
