"""Where what the record says becomes a path: the one place that builds an eval's folders and
checks the files its rows name.

An eval's files live in folders named by its id beside the record (`artifacts/ID`, `logs/ID`),
so an id is checked against `EVAL_ID` wherever it enters (the CLI, the Python API, a merged
record) and again whenever a folder is built from it. A file a row names is used only once it
resolves, symlinks followed, to a file inside that eval's own folder; deletion removes only a
folder built here and never follows a symlink out of it.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePath
from typing import Any

from seq.errors import SeqInputError

EVAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
EVAL_ID_RULE = "1 to 128 letters, digits, '.', '_' or '-', the first a letter or digit"
ARTIFACTS = "artifacts"  # SEQ_HOME/artifacts/ID: videos, trajectories, traces
LOGS = "logs"  # SEQ_HOME/logs/ID: what the eval's processes printed
FILE_KINDS = ("video", "trajectory", "trace")  # the artifacts that name files (not observer_errors)


def seq_home() -> Path:
    """The workspace folder: `$SEQ_HOME`, else `~/.seq`."""
    return Path(os.environ.get("SEQ_HOME") or Path.home() / ".seq")


def is_eval_id(text: object) -> bool:
    return isinstance(text, str) and EVAL_ID.fullmatch(text) is not None


def check_eval_id(text: str, where: str = "eval id") -> str:
    """`text` when it can name an eval (and so a folder); else one sentence naming `where`."""
    if not is_eval_id(text):
        raise SeqInputError(f"{where} {text!r}: expected {EVAL_ID_RULE}.")
    return text


def eval_folder(home: Path, area: str, eval_id: str) -> Path:
    """`home/area/eval_id` (`area` is `ARTIFACTS` or `LOGS`), built only from a checked id."""
    if area not in (ARTIFACTS, LOGS):
        raise ValueError(f"no eval folder area {area!r}")
    return Path(home) / area / check_eval_id(eval_id)


def artifact_folder(home: Path, eval_id: str) -> Path:
    """Where an eval's observers write: `home/artifacts/ID`."""
    return eval_folder(home, ARTIFACTS, eval_id)


def inside(path: Path, folder: Path) -> Path | None:
    """`path` resolved (symlinks followed) when it lies inside `folder` (resolved too), else None."""
    try:
        resolved, root = path.resolve(), folder.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return resolved if resolved != root and resolved.is_relative_to(root) else None


def artifact_file(home: Path, eval_id: str, named: Any) -> Path | None:
    """The file a row of eval `eval_id` names, where it is a file inside that eval's artifact
    folder under `home`; None for anything else (a bad id, a path outside, a missing file). A
    relative name is taken from `home`, as the record's own paths are."""
    if not is_eval_id(eval_id) or not isinstance(named, str) or not named or "\0" in named:
        return None
    path = Path(named)
    found = inside(path if path.is_absolute() else Path(home) / path, artifact_folder(home, eval_id))
    return found if found is not None and found.is_file() else None


def remove_eval_folder(home: Path, area: str, eval_id: str) -> bool:
    """Delete `home/area/ID` with what it holds; returns whether there was a folder. A bad id
    deletes nothing; a symlink in its place is unlinked, never followed; `shutil.rmtree` does
    not follow the symlinks inside."""
    if not is_eval_id(eval_id):
        return False
    folder = eval_folder(home, area, eval_id)
    if folder.is_symlink():
        folder.unlink()
        return False
    if not folder.is_dir():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def unlink_inside(path: Path, folder: Path) -> None:
    """Delete the file `path` where it lies inside `folder` (a stale row's file); else nothing.
    A `folder` that is itself a symlink is not deleted from."""
    if folder.is_symlink():
        return
    if path.is_symlink() and path.parent.resolve().is_relative_to(folder.resolve()):
        path.unlink()
    elif (found := inside(path, folder)) is not None and found.is_file():
        found.unlink()


def observers_here(home: Path, eval_id: str, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The observer specs an eval stored, each writing into its folder of this workspace's
    `artifacts/ID` (a resumed or merged eval's stored directory is never written as it is)."""
    folder = artifact_folder(home, eval_id)
    placed = []
    for spec in specs:
        name = PurePath(str(spec.get("directory") or "")).name
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
            name = "files"
        placed.append({**spec, "directory": str(folder / name)})
    return placed
