"""Dataclasses to and from the JSON the record stores: one strict reader for every typed column.

A key the type does not declare, or a required one missing, is refused with the place named: the
record's schema version says which keys a JSON column holds (`seq.record.migrations` brings older
ones up to date), so an unexpected key means a damaged record or a newer seq.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from seq.errors import SeqInputError

T = TypeVar("T")


class RecordError(SeqInputError):
    """A record's stored JSON does not have the shape its schema version promises."""


def to_plain(value: Any) -> Any:
    """A dataclass (nested in lists and dicts too) as plain JSON-able dicts and lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: to_plain(item) for key, item in value.items()}
    return value


def from_plain(cls: type[T], data: Any, where: str) -> T:
    """`cls` built from the dict `data`, nested dataclasses (also in lists and optionals) included;
    `where` names the place in errors, such as `seq.db: eval ev-1: manifest`."""
    if not isinstance(data, Mapping):
        raise RecordError(f"{where}: expected an object, found {type(data).__name__}.")
    hints, names = _shape(typing.cast(type, cls))
    unknown = sorted(set(data) - names)
    if unknown:
        raise RecordError(
            f"{where}: unknown key {unknown[0]!r} (this seq's {cls.__name__} has "
            f"{', '.join(sorted(names))}); was it written by a newer seq?"
        )
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            values[f.name] = _convert(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise RecordError(f"{where}: the key {f.name!r} is missing.")
    return cls(**values)


@functools.cache
def _shape(cls: type) -> tuple[dict[str, Any], set[str]]:
    """A dataclass's resolved field types and field names (resolved once per class)."""
    return typing.get_type_hints(cls), {f.name for f in dataclasses.fields(cls)}


def _convert(kind: Any, value: Any, where: str) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        choices = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return _convert(choices[0], value, where) if len(choices) == 1 else value
    if dataclasses.is_dataclass(kind):
        return from_plain(kind, value, where)  # type: ignore[arg-type]
    if origin is list:
        (item,) = typing.get_args(kind) or (Any,)
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list, found {type(value).__name__}.")
        return [_convert(item, entry, f"{where}[{i}]") for i, entry in enumerate(value)]
    return value
