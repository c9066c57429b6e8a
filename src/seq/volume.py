"""Python twins of `seq volume put / ls / rm`: read-only folders (datasets, weights) a benchmark
declares with `assets=seq.Volume(NAME)` (`seq.isolation.volumes`).

>>> version, new = seq.volume.put("tasks", "./tasks")
>>> seq.volume.ls()
"""

from __future__ import annotations

from pathlib import Path

from seq.isolation.volumes import VolumeVersion, list_volumes, put_volume, remove_volume


def put(name: str, directory: str | Path, kind: str | None = None) -> tuple[VolumeVersion, bool]:
    """Store a folder as a version of a volume and make it current; the same content is the same
    version. Returns the version and whether it is new. `kind`: dataset or weights (default: the
    volume's kind, else dataset)."""
    return put_volume(name, directory, kind)


def ls() -> list[VolumeVersion]:
    """Every version of every volume (`current` marks each volume's current one)."""
    return list_volumes()


def rm(name: str, version: str | None = None) -> list[VolumeVersion]:
    """Remove a volume (every version), or one `version` of it; returns the versions removed."""
    return remove_volume(name, version)
