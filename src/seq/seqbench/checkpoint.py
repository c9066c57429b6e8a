"""Checkpoints as opaque files: content fingerprints (to prove `infer` changed nothing) and sizes."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink())
    return []


def fingerprint(path: Path) -> dict[str, str]:
    """sha256 of every file of a checkpoint (a file or a folder), keyed by its path."""
    prints: dict[str, str] = {}
    for file in _files(path):
        digest = hashlib.sha256()
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        prints[str(file)] = digest.hexdigest()
    return prints


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Each file that differs: `PATH (modified)`, `PATH (added)` or `PATH (removed)`."""
    found = [f"{p} (modified)" for p in before if p in after and before[p] != after[p]]
    found += [f"{p} (added)" for p in after if p not in before]
    found += [f"{p} (removed)" for p in before if p not in after]
    return found


def size_bytes(path: Path) -> int:
    """The checkpoint's size on disk: the file, or every file under the folder."""
    return sum(p.stat().st_size for p in _files(path) if p.is_file())
