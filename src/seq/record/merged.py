"""What a record merged from elsewhere (`seq eval merge`) may bring in, and where its files go.

A shard run under another `SEQ_HOME` names its files there (`…/artifacts/ID/videos/x.mp4`).
Before anything is merged, every eval id it holds must be one (`seq.record.paths.EVAL_ID`) and
every file an episode names must lie, as written, inside an `artifacts/ID` folder of its own
eval: anything else refuses the whole record in one sentence. Once merged, those names are
moved to this workspace's `artifacts/ID` (the files copied where the merged record has them
beside it), so the console and `--videos` find them where they read: nowhere else.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import (
    ARTIFACTS,
    EVAL_ID_RULE,
    FILE_KINDS,
    artifact_file,
    artifact_folder,
    inside,
    is_eval_id,
)


def within_artifacts(eval_id: str, named: Any) -> PurePath | None:
    """The part of `named` below a folder `artifacts/ID` of eval `eval_id`, as written (no `..`,
    not the folder itself); None where it does not lie in one."""
    if not isinstance(named, str) or not named or "\0" in named:
        return None
    parts = PurePath(named).parts
    if ".." in parts:
        return None
    for index in range(len(parts) - 2, 0, -1):
        if parts[index - 1] == ARTIFACTS and parts[index] == eval_id:
            rest = parts[index + 1 :]
            return PurePath(*rest) if rest else None
    return None


def _artifacts(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _rows(db: sqlite3.Connection, query: str) -> Iterator[Any]:
    """The rows of `query`, or none where the table or column is not in that record's schema."""
    try:
        yield from db.execute(query)
    except sqlite3.DatabaseError:
        return


def check_merged_record(path: Path) -> None:
    """Refuse, in one sentence, a record to merge whose eval ids could not name a folder or whose
    episodes name files outside their eval's artifact folder. A record SQLite cannot read is
    left to the merge's own checks."""
    try:
        db = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True)
    except sqlite3.Error:
        return
    try:
        for table, column in (("evals", "id"), ("items", "eval_id"), ("episodes", "eval_id")):
            for (eval_id,) in _rows(db, f"SELECT DISTINCT {column} FROM {table}"):
                if not is_eval_id(eval_id):
                    raise SeqInputError(
                        f"{path}: its {table} hold the eval id {eval_id!r}, which cannot name a "
                        f"folder (expected {EVAL_ID_RULE}); it is not merged."
                    )
        query = "SELECT eval_id, item_id, artifacts FROM episodes WHERE artifacts != '{}'"
        for eval_id, item_id, text in _rows(db, query):
            artifacts = _artifacts(text)
            if artifacts is None:
                raise SeqInputError(
                    f"{path}: episode {item_id!r} of eval {eval_id} has artifacts that are not a "
                    "JSON object; it is not merged."
                )
            for kind in FILE_KINDS:
                if kind in artifacts and within_artifacts(eval_id, artifacts[kind]) is None:
                    raise SeqInputError(
                        f"{path}: episode {item_id!r} of eval {eval_id} names {artifacts[kind]!r} "
                        f"as its {kind}, which does not lie inside a folder {ARTIFACTS}/{eval_id}; "
                        "it is not merged."
                    )
    finally:
        db.close()


def adopt_artifacts(store: Any, source: Path) -> int:
    """Move the file names of the merged record `source`'s episodes into this workspace's
    artifact folders, copying each file found beside `source` (`artifacts/ID/…`, a plain file
    inside that folder) that is not here yet; returns how many files were copied."""
    home, there = store.path.parent, Path(source).parent
    try:
        db = sqlite3.connect(f"file:{Path(source)}?mode=ro", uri=True)
        merged = {row[0] for row in _rows(db, "SELECT DISTINCT eval_id FROM episodes")}
        db.close()
    except sqlite3.Error:
        return 0
    copied, updates = 0, []
    for eval_id in sorted(merged):
        rows = store._db.execute(
            "SELECT item_id, attempt, artifacts FROM episodes WHERE eval_id=? AND artifacts != '{}'",
            (eval_id,),
        ).fetchall()
        folder = artifact_folder(home, eval_id)
        for item_id, attempt, text in rows:
            artifacts = _artifacts(text) or {}
            changed = False
            for kind in FILE_KINDS:
                rest = within_artifacts(eval_id, artifacts.get(kind))
                if rest is None or inside(Path(artifacts[kind]), folder) is not None:
                    continue  # not a name a merge brought in, or one of this workspace already
                target = folder / rest
                found = artifact_file(there, eval_id, str(artifact_folder(there, eval_id) / rest))
                if found is not None and not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(found, target)
                    copied += 1
                artifacts[kind], changed = str(target), True
            if changed:
                updates.append((json.dumps(artifacts), eval_id, item_id, attempt))
    if updates:
        with store.transaction() as write:
            write.executemany(
                "UPDATE episodes SET artifacts=? WHERE eval_id=? AND item_id=? AND attempt=?", updates
            )
    return copied
