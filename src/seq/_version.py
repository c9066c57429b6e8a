"""The version of `seq`, and the git commit it runs from when it runs from a checkout."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path

try:
    __version__ = metadata.version("seq")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"


@functools.lru_cache(maxsize=1)
def git_sha() -> str | None:
    """The commit of the checkout `seq` is imported from (with `+dirty` if it has changes), else None."""
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return sha.stdout.strip() + ("+dirty" if dirty else "")
