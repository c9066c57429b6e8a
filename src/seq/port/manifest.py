"""An export folder's `export.json`, checked where it is read: every key the port tools use is
there with the type they use it as, and every name in it stays a file inside the folder. Bad
input is one sentence naming the file and the key, never a KeyError from deep in a command."""

from __future__ import annotations

import json
import os
import re
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeGuard

from seq.errors import SeqInputError

FORMAT = 1
MANIFEST = "export.json"
SCENES = "scenes"
STARTS = "starts"
OPTIONS = "options.json"
BUILD = "build.json"
MAX_CONTACTS = 100_000  # at a start, in one world: the contact buffers are sized from it
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a benchmark's name, as the registry takes it
VERSION = re.compile(r"[0-9][A-Za-z0-9.+-]*")  # an engine's version, such as 3.3.0 or 3.0.0b1


class Engine(StrEnum):
    """The simulator a scene was exported from: classic MuJoCo, or SAPIEN's CPU PhysX."""

    MUJOCO = "mujoco"
    SAPIEN = "sapien"


SCENE_FILES = {Engine.MUJOCO: ("scene.xml", OPTIONS), Engine.SAPIEN: (BUILD,)}


def read_manifest(directory: Path) -> dict[str, Any]:
    """A scene folder's export.json, checked; SeqInputError when `directory` is not one."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise SeqInputError(
            f"{directory}: not an exported scene (no {MANIFEST}); make one with `seq benchmark export`."
        )
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SeqInputError(f"{path}: not JSON ({error}); expected what `seq benchmark export` writes.") \
            from None
    if not isinstance(manifest, dict):
        raise SeqInputError(f"{path}: expected a JSON object, got {type(manifest).__name__}.")
    if manifest.get("format") != FORMAT:
        raise SeqInputError(f"{path}: format {manifest.get('format')!r}; this seq reads format {FORMAT}.")
    engine = manifest_engine(path, manifest)
    _matching(path, "benchmark", manifest.get("benchmark"), NAME, "a benchmark's name")
    _matching(path, engine.value, manifest.get(engine.value), VERSION, "a version, such as 3.3.0")
    _no_links(Path(directory))
    steps = manifest.get("steps")
    if not _whole(steps) or steps < 1:
        raise SeqInputError(f"{path}: steps: expected a whole number of 1 or more, got {steps!r}.")
    scenes = _objects(path, SCENES, manifest.get(SCENES), at_least=1)
    for index, scene in enumerate(scenes):
        key = f"{SCENES}[{index}]"
        scene_id = _name(path, f"{key}.id", scene.get("id"))
        tasks = scene.get("tasks")
        if not isinstance(tasks, list) or not all(isinstance(task, str) for task in tasks):
            raise SeqInputError(f"{path}: {key}.tasks: expected a list of task names, got {tasks!r}.")
        for part in SCENE_FILES[engine]:
            if not (Path(directory) / SCENES / scene_id / part).is_file():
                raise SeqInputError(f"{path}: {key}: no {SCENES}/{scene_id}/{part} in the folder.")
    ids = [scene["id"] for scene in scenes]
    for index, start in enumerate(_objects(path, STARTS, manifest.get(STARTS), at_least=0)):
        _check_start(Path(directory), path, f"{STARTS}[{index}]", start, ids)
    return manifest


def manifest_engine(path: Path, manifest: dict[str, Any]) -> Engine:
    """The manifest's `engine` (a scene exported before SAPIEN's port names none: MuJoCo)."""
    value = manifest.get("engine", Engine.MUJOCO.value)
    if value not in {engine.value for engine in Engine}:
        raise SeqInputError(
            f"{path}: engine: expected one of {[e.value for e in Engine]}, got {_shown(value)}."
        )
    return Engine(value)


def _check_start(directory: Path, path: Path, key: str, start: dict[str, Any], ids: list[str]) -> None:
    _text(path, f"{key}.task", start.get("task"))
    for field in ("seed", "contacts"):
        if not _whole(start.get(field)):
            raise SeqInputError(f"{path}: {key}.{field}: expected a whole number, got {start.get(field)!r}.")
    if not 0 <= start["contacts"] <= MAX_CONTACTS:
        raise SeqInputError(
            f"{path}: {key}.contacts: expected 0 to {MAX_CONTACTS:,} contacts at a start, "
            f"got {start['contacts']}."
        )
    scene = start.get("scene")
    if scene not in ids:
        raise SeqInputError(f"{path}: {key}.scene: expected one of the scenes {ids}, got {_shown(scene)}.")
    file = start.get("file")
    parts = Path(file).parts if isinstance(file, str) else ()
    if (not isinstance(file, str) or len(parts) != 2 or parts[0] != STARTS or not _is_name(parts[1])
            or not parts[1].endswith(".npz")):
        raise SeqInputError(f"{path}: {key}.file: expected {STARTS}/NAME.npz, got {file!r}.")
    if not (directory / file).is_file():
        raise SeqInputError(f"{path}: {key}.file: no {file} in the folder.")
    if "facts" in start and not isinstance(start["facts"], dict):
        raise SeqInputError(f"{path}: {key}.facts: expected an object, got {_shown(start['facts'])}.")


def _no_links(directory: Path) -> None:
    """An export folder holds its own files: a symbolic link in it (a start, a scene, an asset)
    could make a file outside it part of a replay, a scaffold's copy or a volume."""
    for root, folders, files in os.walk(directory):
        for name in (*folders, *files):
            if os.path.islink(os.path.join(root, name)):
                link = Path(root, name).relative_to(directory)
                raise SeqInputError(
                    f"{directory}: {link} is a symbolic link; an export folder holds its own files "
                    "(copy them in, or export again)."
                )


def _matching(path: Path, key: str, value: Any, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise SeqInputError(f"{path}: {key}: expected {what}, got {_shown(value)}.")
    return value


def _objects(path: Path, key: str, value: Any, at_least: int) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise SeqInputError(f"{path}: {key}: expected a list of objects, got {_shown(value)}.")
    if len(value) < at_least:
        raise SeqInputError(f"{path}: {key}: expected at least {at_least}, got none.")
    return value


def _text(path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise SeqInputError(f"{path}: {key}: expected a non-empty string, got {_shown(value)}.")
    return value


def _name(path: Path, key: str, value: Any) -> str:
    """A name that is one file name inside the folder: not `..`, no separator."""
    if not _is_name(value):
        raise SeqInputError(f"{path}: {key}: expected a folder name (no '/', not '..'), got {_shown(value)}.")
    return value


def _is_name(value: Any) -> bool:
    return (isinstance(value, str) and value not in ("", ".", "..")
            and not any(c in value for c in "/\\\0"))


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    return "nothing" if value is None else repr(value)
