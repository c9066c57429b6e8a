"""Reading a grid config's YAML strictly: UTF-8 text, and no key given twice (PyYAML would keep
the last one silently, so a grid would run other cells than the file seems to say)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from seq.errors import SeqInputError

MERGE = "tag:yaml.org,2002:merge"


class _UniqueKeys(yaml.SafeLoader):
    """A safe loader that refuses a mapping holding one key twice."""

    source = "<yaml>"


def _mapping(loader: _UniqueKeys, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == MERGE:  # `<<: *base` merges; an own key may override a merged one
            continue
        key, line = loader.construct_object(key_node, deep=True), key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor says so
            continue
        if first is not None:
            raise SeqInputError(
                f"{loader.source}: key {key!r} is given twice (lines {first} and {line}); give each key once."
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def read_yaml(path: Path) -> Any:
    """The data of the YAML file at `path`; unreadable, non-UTF-8 or invalid YAML, or a key given
    twice, is refused in one sentence naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise SeqInputError(
            f"{path}: not UTF-8 text (byte {error.start}); save the grid config as UTF-8."
        ) from None
    except OSError as error:
        raise SeqInputError(f"{path}: cannot read the grid config ({error.strerror}).") from None
    loader = _UniqueKeys(text)
    loader.source = str(path)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise SeqInputError(f"{path}: not valid YAML{where}.") from None
    finally:
        loader.dispose()
