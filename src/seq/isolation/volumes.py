"""Volumes: named, content-addressed, read-only folders of files (datasets, weights).

`put_volume("tasks", "./tasks")` copies a folder under `SEQ_HOME/volumes/tasks/<version>/`, where the
version is the first 16 hex digits of a sha256 over the folder's relative paths, file bytes and
executable bits: the same content is the same version (made current again, nothing copied twice),
changed content a new one, and the old versions stay until removed. Stored files are mode 0444
(0555 if executable) and folders 0555; a worker sees the current version at `/assets`
(`seq.isolation.assets`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import seq_home

KINDS = ("dataset", "weights")
NAME = re.compile(r"[A-Za-z0-9._-]+")
VERSION_DIGITS = 16
_CHUNK = 1 << 20


@dataclass(frozen=True)
class VolumeVersion:
    """One stored version of a volume."""

    name: str
    version: str
    kind: str
    path: Path
    files: int
    size_bytes: int
    created_at: str
    current: bool

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "path": str(self.path),
            "files": self.files,
            "size_bytes": self.size_bytes,
            "created_at": self.created_at,
            "current": self.current,
        }


def check_name(name: Any, what: str = "volume") -> str:
    """`name` if it is a usable volume or secret name, else a SeqInputError naming it."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or name in (".", ".."):
        raise SeqInputError(
            f"{what} name {name!r}: expected letters, digits, '.', '_' or '-' only (no '/', not '.' or '..')."
        )
    return name


def volumes_root() -> Path:
    return seq_home() / "volumes"


def put_volume(name: str, directory: str | Path, kind: str | None = None) -> tuple[VolumeVersion, bool]:
    """Store `directory` as a version of volume `name` and make it current.

    Returns the version and whether it is new (False: the same content was stored already). `kind`
    is "dataset" or "weights"; left out, it is the volume's current kind, else "dataset".
    """
    check_name(name)
    if kind is not None and kind not in KINDS:
        raise SeqInputError(f"kind {kind!r}: expected one of {', '.join(KINDS)}.")
    source = Path(directory).expanduser()
    if not source.is_dir():
        state = "is not a directory" if source.exists() else "does not exist"
        raise SeqInputError(f"directory {str(source)!r} {state}; expected a folder of files to store.")
    home = volumes_root() / name
    home.mkdir(parents=True, exist_ok=True)
    _clean_stale_temporaries(home)
    staging = home / f".tmp-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        files, size, version = _copy_tree(source, staging)
        _make_read_only(staging)
        with _locked():
            index = _read_index(name) or {"name": name, "current": None, "versions": []}
            entries = {entry["version"]: entry for entry in index["versions"]}
            if kind is None:
                current = entries.get(index.get("current") or "")
                kind = current["kind"] if current else "dataset"
            final = home / version
            new = version not in entries
            if new:
                if final.exists():  # left by a put that crashed before its index was written
                    _remove_tree(final)
                os.rename(staging, final)
                entry = {
                    "version": version,
                    "kind": kind,
                    "files": files,
                    "size_bytes": size,
                    "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
                index["versions"].append(entry)
            else:
                entries[version]["kind"] = kind
            index["current"] = version
            _write_index(name, index)
    finally:
        if staging.exists():
            _remove_tree(staging)
    return _version_of(name, index, version), new


def current_volume(name: str) -> VolumeVersion:
    """The version of `name` put last."""
    index = _index_or_error(name)
    return _version_of(name, index, index["current"])


def volume_version(name: str, version: str) -> VolumeVersion:
    """One version of a volume, by its 16 hex digits (a unique prefix of four or more also works)."""
    index = _index_or_error(name)
    return _version_of(name, index, _resolve_version(name, index, version))


def list_volumes() -> list[VolumeVersion]:
    """Every version of every volume: by name, then in the order they were first put."""
    root = volumes_root()
    if not root.is_dir():
        return []
    found: list[VolumeVersion] = []
    for home in sorted(root.iterdir()):
        index = _read_index(home.name) if home.is_dir() and NAME.fullmatch(home.name) else None
        if index:
            found.extend(_version_of(home.name, index, entry["version"]) for entry in index["versions"])
    return found


def remove_volume(name: str, version: str | None = None) -> list[VolumeVersion]:
    """Remove one version of a volume, or every version (and the name) when `version` is None.

    Removing the current version makes the newest remaining one current. Returns what was removed.
    """
    with _locked():
        index = _index_or_error(name)
        if version is None:
            targets = [entry["version"] for entry in index["versions"]]
        else:
            targets = [_resolve_version(name, index, version)]
        removed = [_version_of(name, index, target) for target in targets]
        index["versions"] = [entry for entry in index["versions"] if entry["version"] not in targets]
        if not index["versions"]:
            _remove_tree(volumes_root() / name)
            return removed
        if index["current"] in targets:
            index["current"] = index["versions"][-1]["version"]
        _write_index(name, index)
        for target in targets:
            _remove_tree(volumes_root() / name / target)
    return removed


# -- the copy -----------------------------------------------------------------------------------------


def _copy_tree(source: Path, destination: Path) -> tuple[int, int, str]:
    """Copy `source` into the new folder `destination`, following links that stay inside it.

    Returns (files, bytes, version).
    """
    root = os.path.realpath(source)
    entries: list[str] = []
    totals = [0, 0]

    def walk(real_dir: str, relative: str, target: Path, ancestors: tuple[str, ...]) -> None:
        target.mkdir(mode=0o700)
        with os.scandir(real_dir) as listing:
            children = sorted(listing, key=lambda entry: entry.name)
        for child in children:
            rel = f"{relative}/{child.name}" if relative else child.name
            path = child.path
            if child.is_symlink():
                resolved = os.path.realpath(path)
                if not (resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep)):
                    raise SeqInputError(
                        f"directory {str(source)!r}: the link {rel} points outside it (to {resolved}); "
                        "expected files, folders, or links within the folder."
                    )
                if not os.path.exists(resolved):
                    raise SeqInputError(f"directory {str(source)!r}: the link {rel} points to nothing.")
                path = resolved
            mode = os.stat(path).st_mode
            if stat.S_ISDIR(mode):
                real = os.path.realpath(path)
                if real in ancestors:
                    raise SeqInputError(
                        f"directory {str(source)!r}: the link {rel} points to a folder that contains it "
                        "(a loop); expected links that do not loop."
                    )
                entries.append(f"d\0{rel}\0\0\n")
                walk(real, rel, target / child.name, (*ancestors, real))
            elif stat.S_ISREG(mode):
                executable = bool(mode & 0o111)
                digest, size = _copy_file(path, target / child.name)
                entries.append(f"f\0{rel}\0{'x' if executable else '-'}\0{digest}\n")
                totals[0] += 1
                totals[1] += size
                if executable:
                    os.chmod(target / child.name, 0o755)
            else:
                raise SeqInputError(
                    f"directory {str(source)!r}: {rel} is not a regular file or folder "
                    "(a device, socket or pipe); expected only files and folders."
                )

    walk(root, "", destination, (root,))
    digest = hashlib.sha256()
    for entry in sorted(entries, key=lambda text: text.split("\0")[1]):
        digest.update(entry.encode("utf-8", "surrogateescape"))
    return totals[0], totals[1], digest.hexdigest()[:VERSION_DIGITS]


def _copy_file(source: str, target: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(source, "rb") as reader, open(target, "xb") as writer:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _make_read_only(top: Path) -> None:
    for directory, _, files in os.walk(top, topdown=False):
        for name in files:
            path = os.path.join(directory, name)
            os.chmod(path, 0o555 if os.stat(path).st_mode & 0o111 else 0o444)
        os.chmod(directory, 0o555)


def _remove_tree(top: Path) -> None:
    """Delete a stored (read-only) tree: make its folders writable again, then remove it."""
    if not top.exists():
        return
    for directory, _, _ in os.walk(top):
        os.chmod(directory, 0o755)
    shutil.rmtree(top)


def _clean_stale_temporaries(home: Path) -> None:
    """Remove staging folders left by puts whose process is gone."""
    for path in home.glob(".tmp-*"):
        try:
            pid = int(path.name.split("-")[1])
            os.kill(pid, 0)
        except (ValueError, IndexError, ProcessLookupError):
            _remove_tree(path)
        except PermissionError:
            pass


# -- the index ----------------------------------------------------------------------------------------


@contextmanager
def _locked() -> Iterator[None]:
    root = volumes_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read_index(name: str) -> dict[str, Any] | None:
    try:
        return json.loads((volumes_root() / name / "index.json").read_text())
    except FileNotFoundError:
        return None


def _write_index(name: str, index: dict[str, Any]) -> None:
    path = volumes_root() / name / "index.json"
    temporary = path.with_name(f".index-{os.getpid()}-{time.monotonic_ns()}.json")
    temporary.write_text(json.dumps(index, indent=2) + "\n")
    os.replace(temporary, path)


def _index_or_error(name: str) -> dict[str, Any]:
    check_name(name)
    index = _read_index(name)
    if not index or not index.get("versions"):
        raise SeqInputError(
            f"volume {name}: no such volume (seq volume ls lists them; seq volume put {name} DIR makes one)."
        )
    return index


def _resolve_version(name: str, index: dict[str, Any], version: str) -> str:
    known = [entry["version"] for entry in index["versions"]]
    if version in known:
        return version
    matches = (
        [v for v in known if v.startswith(version)]
        if isinstance(version, str) and len(version) >= 4 and re.fullmatch(r"[0-9a-f]+", version)
        else []
    )
    if len(matches) == 1:
        return matches[0]
    raise SeqInputError(
        f"volume {name}: no version {version!r} "
        f"({'it is ambiguous' if matches else 'its versions are ' + ', '.join(known)})."
    )


def _version_of(name: str, index: dict[str, Any], version: str) -> VolumeVersion:
    entry = next(entry for entry in index["versions"] if entry["version"] == version)
    return VolumeVersion(
        name=name,
        version=version,
        kind=entry["kind"],
        path=volumes_root() / name / version,
        files=entry["files"],
        size_bytes=entry["size_bytes"],
        created_at=entry["created_at"],
        current=index["current"] == version,
    )
