"""The assets mount: a worker process sees its benchmark's volume read-only at `/assets`.

`enter_assets(source)` runs early in a worker (a fresh `python -m seq.engine FD`, still
single-threaded): it moves the process into its own mount namespace, makes every mount private so
nothing propagates back, binds the volume's folder at `/assets` read-only and binds the folder onto
itself read-only too, so neither path can be written, not even by root. Where that is not possible
(not root, no mount namespaces) the worker reads the volume from its store path, whose files are
mode 0444. Either way `SEQ_ASSETS` names the folder and `seq.assets_path()` returns it.

Only the standard library is imported here.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

ASSETS_MOUNT = Path("/assets")
ENVIRONMENT = "SEQ_ASSETS"

CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_RELATIME = 1 << 21
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
# statvfs flags that share their value with a MS_ flag; kept on the read-only remount (a remount
# that drops a flag the mount has is refused in some namespaces)
_KEPT = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC))
_KEPT_TIME = ((os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))


class _MountError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.unshare.argtypes = [ctypes.c_int]
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def _call(step: str, result: int) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise _MountError(number, f"{step}: {os.strerror(number)}")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, flags: int) -> None:
    _call(
        f"mount {target}",
        libc.mount(source.encode() if source else None, target.encode(), None, flags, None),
    )


def _bind_read_only(libc: ctypes.CDLL, source: str, target: str, mounted: list[str]) -> None:
    _mount(libc, source, target, MS_BIND | MS_REC)
    mounted.append(target)
    flags = os.statvfs(target).f_flag
    kept = 0
    for st_flag, ms_flag in _KEPT + _KEPT_TIME:
        if flags & st_flag:
            kept |= ms_flag
    _mount(libc, None, target, MS_BIND | MS_REMOUNT | MS_RDONLY | kept)


def enter_assets(source: Path) -> str:
    """Make the volume folder `source` visible read-only to this process; returns one line saying how.

    Call it while the process is single-threaded and before anything reads `SEQ_ASSETS`.
    """
    source_path = os.path.realpath(source)
    if not os.path.isdir(source_path):
        raise FileNotFoundError(f"volume folder {source_path} does not exist")
    libc = None
    mounted: list[str] = []
    try:
        libc = _libc()
        _call("unshare(CLONE_NEWNS)", libc.unshare(CLONE_NEWNS))
        # nothing mounted from here on may propagate back to the parent's namespace
        _mount(libc, None, "/", MS_REC | MS_PRIVATE)
        target = str(ASSETS_MOUNT)
        if not os.path.isdir(target):
            os.mkdir(target, 0o555)
        _bind_read_only(libc, source_path, target, mounted)
        _bind_read_only(libc, source_path, source_path, mounted)
    except OSError as error:
        for target in reversed(mounted):  # never leave a writable bind behind
            if libc is not None:
                libc.umount2(target.encode(), MNT_DETACH)
        os.environ[ENVIRONMENT] = source_path
        reason = error.strerror or str(error)
        if error.filename:
            reason = f"{error.filename}: {reason}"
        return f"volume at {source_path}, read-only by file mode (no mount namespace here: {reason})"
    os.environ[ENVIRONMENT] = str(ASSETS_MOUNT)
    return f"volume mounted read-only at {ASSETS_MOUNT} (mount namespace)"


def assets_path() -> Path:
    """Where the benchmark's `assets=` volume is, inside a worker (`/assets` where it can be mounted)."""
    value = os.environ.get(ENVIRONMENT)
    if not value:
        raise RuntimeError(
            "seq.assets_path(): this benchmark declares no assets= volume "
            "(declare assets=seq.Volume.from_name(NAME) in @seq.benchmark and put it with seq volume put)."
        )
    return Path(value)


def seal_read_only(source: Path) -> str:
    """Make the folder `source` read-only to this thread and the threads it starts, even for root:
    a private mount namespace in which it is bound onto itself read-only (a policy's `weights=` in a
    worker process, loaded on its main thread). Where that is not possible, its files stay read-only
    by file mode. Returns one line saying which."""
    source_path = os.path.realpath(source)
    mounted: list[str] = []
    libc = None
    try:
        libc = _libc()
        _call("unshare(CLONE_NEWNS)", libc.unshare(CLONE_NEWNS))
        _mount(libc, None, "/", MS_REC | MS_PRIVATE)
        _bind_read_only(libc, source_path, source_path, mounted)
    except OSError as error:
        for target in reversed(mounted):
            if libc is not None:
                libc.umount2(target.encode(), MNT_DETACH)
        return f"weights at {source_path}, read-only by file mode ({error.strerror or error})"
    return f"weights mounted read-only at {source_path} (mount namespace)"
