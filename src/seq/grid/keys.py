"""Checking the keys and values of a config mapping, each error naming the key and the file."""

from __future__ import annotations

import difflib
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
    body: Mapping[str, Any], key: str, kind: type, where: str, source: str, positive: bool = False
) -> Any:
    """`body[key]` checked to be a `kind` (an int is a float too), or None when absent."""
    value = body.get(key)
    if value is None:
        return None
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        ok, value = True, float(value)
    name = {int: "an integer", float: "a number", str: "a string"}[kind]
    if not ok:
        raise SeqInputError(f"{source}: key {_path(where, key)!r}: expected {name}, got {value!r}.")
    if positive and value <= 0:
        raise SeqInputError(f"{source}: key {_path(where, key)!r}: expected a positive value, got {value!r}.")
    return value
