"""The resources a benchmark declares: `cpu=` workers, `memory=` for all of them, `gpu=` a card."""

from __future__ import annotations

import re
from typing import Any

from seq.errors import SeqInputError

_UNITS = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kKmMgGtT])i?[bB]?)?\s*$")
_EXPECTED = "expected GiB as a number (32) or a text with its unit ('512MiB', '2GiB')"
_EXPECTED_ENV = "expected what one env takes, a text with its unit ('512MiB', '2GiB') or GiB (0.5)"


def parse_memory(value: Any, where: str, key: str = "memory", least: int = 64 * 2**20) -> int:
    """Bytes from `memory=`, for all of a benchmark's workers together (or `env_memory=`, one env's,
    with `least=1`): a bare number is GiB (`cpu=16, memory=32`), a text names its
    unit (`"512MiB"`, `"2GiB"`)."""
    expected = _EXPECTED if key == "memory" else _EXPECTED_ENV
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise SeqInputError(f"{where}: {key}={value!r} is not a size; {expected}.")
    if isinstance(value, str):
        match = _MEMORY.match(value)
        if match is None:
            raise SeqInputError(f"{where}: {key}={value!r} is not a size; {expected}.")
        if match.group(2) is None:  # "512" once meant MiB: ask rather than guess
            raise SeqInputError(
                f"{where}: {key}={value!r} has no unit; write {match.group(1)} (a number is GiB) "
                f"or '{match.group(1)}MiB'."
            )
        number, unit = float(match.group(1)), _UNITS[match.group(2).lower()]
    elif value != value or value in (float("inf"), float("-inf")):
        raise SeqInputError(f"{where}: {key}={value!r} is not a size; {expected}.")
    else:
        number, unit = value, 2**30
    try:
        size = int(number * unit)
    except OverflowError:  # a float past 1.8e308 bytes: no machine's
        raise SeqInputError(f"{where}: {key}={value!r} is not a size any machine has; {expected}.") from None
    if size < least:
        if key != "memory":
            raise SeqInputError(f"{where}: {key}={value!r} is under one byte; {expected}.")
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
