"""Checking the keys and values of a config mapping, each error naming the key and the file."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any

from seq.errors import SeqInputError


class Keys:
    """The keys a mapping of the config may hold."""

    def __init__(self, names: str) -> None:
        self.names = tuple(names.split())


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def checked(body: Any, keys: Keys, where: str, source: str) -> Mapping[str, Any]:
    """`body` itself, refused unless it is a mapping whose every key is one of `keys`."""
    if not isinstance(body, Mapping):
        raise SeqInputError(f"{source}: key {where!r}: expected a mapping of {', '.join(keys.names)}.")
    for key in body:
        if key not in keys.names:
            close = difflib.get_close_matches(str(key), keys.names, n=1)
            hint = (
                f" (did you mean {close[0]!r}?)" if close else f"; expected one of: {', '.join(keys.names)}"
            )
            raise SeqInputError(f"{source}: unknown key {_path(where, str(key))!r}{hint}.")
    return body


def as_list(value: Any, key: str, source: str) -> list[Any]:
    if not isinstance(value, list):
        raise SeqInputError(f"{source}: key {key!r}: expected a list.")
    return value


def typed(
    body: Mapping[str, Any],
    key: str,
    kind: type,
    where: str,
    source: str,
    positive: bool = False,
    below: int | None = None,
) -> Any:
    """`body[key]` checked to be a `kind` (an int is a float too; a number is finite), positive
    where asked and less than `below` where given, or None when absent."""
    value = body.get(key)
    if value is None:
        return None
    ok = isinstance(value, kind) and not isinstance(value, bool)
    name = {int: "an integer", float: "a number", str: "a string"}[kind]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        ok = value.bit_length() <= 1000  # float() of a longer one overflows
        value = float(value) if ok else value
    if ok and kind is float and not math.isfinite(value):
        ok, name = False, "a finite number"
    if not ok:
        raise SeqInputError(f"{source}: key {_path(where, key)!r}: expected {name}, got {value!r}.")
    if positive and value <= 0:
        raise SeqInputError(f"{source}: key {_path(where, key)!r}: expected a positive value, got {value!r}.")
    if below is not None and value >= below:
        raise SeqInputError(
            f"{source}: key {_path(where, key)!r}: expected a value below {below:,}, got {value!r}."
        )
    return value


def name_of(value: Any, where: str, source: str) -> str:
    """A name of the grid (a family, variation, mode, policy id or suite cell) that can be a folder
    of the run directory: not empty, not `.` or `..`, and without `/`."""
    name = str(value)
    if not name.strip() or name in (".", "..") or "/" in name:
        raise SeqInputError(
            f"{source}: key {where!r}: {name!r} cannot name a cell; a name is not empty, "
            "not '.' or '..', and holds no '/'."
        )
    return name
