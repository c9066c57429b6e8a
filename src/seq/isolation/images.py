"""Local images: a `seq.Image` built once as a virtual environment with uv, cached by content hash.

`ensure_image(image)` returns the environment for an image's description, building it the first
time into `images_dir()/<key>` (`$SEQ_IMAGES`, else `$SEQ_HOME/images`), where the key hashes the
description, the Python version, seq's own core requirements and the build recipe. A build happens
in a temporary folder next to the final one, under a lock file, and is renamed into place only when
complete, so two evals starting together build once and a half-built folder is never used.

`seq` itself is not installed into an image: its core requirements are (resolved together with the
image's first pip step), and the `seq` package is linked in (`<image>/seq-link/seq` points at the
package this process imports, found through a `.pth` file), so a worker runs the same `seq` code as
the runner without copying the rest of the runner's environment.

`apt_install` packages are requirements of the machine, checked with dpkg, not installed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from seq.authoring.declarations import Image
from seq.errors import SeqInputError
from seq.record.paths import seq_home

IMAGE_FILE = "image.json"  # written last: a folder without it is not an image
LAST_USED_FILE = "last_used"  # its modification time is the last ensure_image
LINK_DIR = "seq-link"
PTH_FILE = "seq_link.pth"
_BASE = re.compile(r"^debian-slim(?:-py(\d+\.\d+))?$")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
# Local package sources of this machine's pip, given to uv as well when they exist.
FIND_LINKS = ("/opt/wheels",)
EXTRA_INDEXES = ("/opt/pypi/simple", "/opt/pypi-more/simple")
# seq's core requirements an image does not need: uv builds images, the runner's own tool.
NOT_IN_IMAGES = {"uv"}
PIP_STEPS = ("uv_pip_install", "pip_install")


class ImageBuildError(SeqInputError):
    """An image could not be built: one paragraph naming the step or package, and uv's reason."""


@dataclass(frozen=True)
class BuiltImage:
    key: str  # content hash of the description (first 16 hex digits of sha256)
    path: Path  # images_dir() / key
    python: Path  # the virtual environment's python
    environment: dict[str, str]  # the Image's .env(...) variables, for worker processes
    description: dict[str, Any]  # Image.to_dict() plus the python version used
    setup_s: float  # seconds this call spent (building, or just checking when cached)
    cached: bool  # True when it was already built


@dataclass(frozen=True)
class ImageInfo:
    key: str
    path: Path
    description: dict[str, Any]
    size_bytes: int
    built_at: float
    last_used: float


def images_dir() -> Path:
    """Where built images live: `$SEQ_IMAGES` (one cache for several workspaces), else
    `$SEQ_HOME/images`."""
    shared = os.environ.get("SEQ_IMAGES")
    return Path(shared) if shared else seq_home() / "images"


def image_of(value: Any) -> Image:
    """An `Image` from itself or from its `to_dict()` form (as stored with a benchmark's version)."""
    if isinstance(value, Image):
        return value
    if isinstance(value, dict) and "base" in value:
        return Image.from_dict(value)
    raise SeqInputError(f"expected a seq.Image (or its stored description), got {value!r}.")


def python_version(image: Image) -> str:
    """The Python major.minor an image asks for: its base's, else the running interpreter's."""
    match = _BASE.match(image.base)
    if match is None:
        raise ImageBuildError(
            f"image base {image.base!r} cannot be built locally; use seq.Image.debian_slim() "
            '(optionally with python_version="3.X").'
        )
    return match.group(1) or f"{sys.version_info.major}.{sys.version_info.minor}"


def seq_requirements() -> list[str]:
    """seq's own core requirements (no extras), from its installed metadata, for every image."""
    try:
        requires = metadata.requires("seq") or []
    except metadata.PackageNotFoundError as error:
        raise ImageBuildError(
            "seq's package metadata was not found, so its requirements cannot be installed into an "
            "image; install seq with `pip install -e .`."
        ) from error
    kept = []
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        if "extra" in marker:
            continue
        name = re.split(r"[\s<>=!~\[(@;]", spec.strip(), maxsplit=1)[0]
        if name.lower() not in NOT_IN_IMAGES:
            kept.append(requirement.strip())
    return kept


def describe_image(image: Image) -> dict[str, Any]:
    return {**image.to_dict(), "python": python_version(image)}


# How seq builds an image from its description; a change here (a new uv flag) is a new key for all.
RECIPE = 2


def image_key(image: Image) -> str:
    """The first 16 hex digits of the sha256 of the description, Python version, seq's requirements
    and the build recipe."""
    payload = {
        "description": describe_image(image),
        "seq_requirements": seq_requirements(),
        "recipe": RECIPE,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ensure_image(image: Image, log: Callable[[str], None] | None = None) -> BuiltImage:
    """The built environment for `image`: from the cache, else built now (once, even when called
    by several processes together)."""
    start = time.perf_counter()
    say = log or (lambda line: None)
    image = image_of(image)
    key = image_key(image)
    description = describe_image(image)
    final = images_dir() / key
    cached = _complete(final)
    if not cached:
        images_dir().mkdir(parents=True, exist_ok=True)
        with _locked(key):
            cached = _complete(final)  # another process may have built it while we waited
            if not cached:
                _build(image, key, description, final, say)
    _link_seq(final)  # point at the seq this process runs, should the checkout have moved
    (final / LAST_USED_FILE).touch()
    return BuiltImage(
        key=key,
        path=final,
        python=final / "bin" / "python",
        environment=dict(image.environment),
        description=description,
        setup_s=time.perf_counter() - start,
        cached=cached,
    )


def list_images() -> list[ImageInfo]:
    """The built images, most recently used first."""
    found = []
    root = images_dir()
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if path.name.startswith(".") or not _complete(path):
            continue
        try:
            meta = json.loads((path / IMAGE_FILE).read_text())
        except (OSError, ValueError):
            continue
        last_used = path / LAST_USED_FILE
        found.append(
            ImageInfo(
                key=path.name,
                path=path,
                description=meta.get("description", {}),
                size_bytes=_size(path),
                built_at=float(meta.get("built_at", 0.0)),
                last_used=last_used.stat().st_mtime if last_used.exists() else float(meta.get("built_at", 0)),
            )
        )
    return sorted(found, key=lambda info: info.last_used, reverse=True)


def remove_image(key_prefix: str) -> list[str]:
    """Remove the images whose key starts with `key_prefix`; the keys removed."""
    prefix = key_prefix.strip()
    keys = [info.key for info in list_images() if prefix and info.key.startswith(prefix)]
    if not keys:
        known = ", ".join(info.key for info in list_images()) or "none are built"
        raise SeqInputError(f"no image key starts with {key_prefix!r} (images: {known}).")
    for key in keys:
        doomed = images_dir() / f".{key}.rm-{uuid.uuid4().hex[:8]}"
        with _locked(key):
            with contextlib.suppress(FileNotFoundError):  # removed meanwhile by another process
                os.replace(images_dir() / key, doomed)  # gone at once for other processes
        shutil.rmtree(doomed, ignore_errors=True)
    return keys


# -- building ---------------------------------------------------------------------------------


def _complete(path: Path) -> bool:
    return (path / IMAGE_FILE).is_file() and (path / "bin" / "python").exists()


@contextlib.contextmanager
def _locked(key: str) -> Iterator[None]:
    """An exclusive lock on one key, across processes (the lock file stays; removing it would race)."""
    images_dir().mkdir(parents=True, exist_ok=True)
    with open(images_dir() / f".{key}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(image: Image, key: str, description: dict[str, Any], final: Path, say: Callable) -> None:
    start = time.perf_counter()
    for stale in images_dir().glob(f".{key}.tmp-*"):  # left by a build that was killed
        shutil.rmtree(stale, ignore_errors=True)
    _check_apt(image, key, say)  # machine requirements first: nothing to build if they fail
    building = images_dir() / f".{key}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        _build_into(image, key, building, say)
        meta = {"key": key, "description": description, "built_at": time.time()}
        meta["build_s"] = round(time.perf_counter() - start, 3)
        (building / IMAGE_FILE).write_text(json.dumps(meta, indent=2) + "\n")
        os.replace(building, final)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    say(f"image {key}: built in {time.perf_counter() - start:.1f}s at {final}")


def _build_into(image: Image, key: str, folder: Path, say: Callable) -> None:
    version = python_version(image)
    python = _find_python(version)
    say(f"image {key}: creating a virtual environment (python {version})")
    # relocatable: the folder is renamed into place once built, so scripts must not hold its path
    command = ["venv", "--relocatable", "--python", python, str(folder)]
    if any(kind == "run_commands" for kind, _ in image.steps):
        command.insert(1, "--seed")  # pip inside the environment, for commands that call it
    _uv(command, key, f"creating the virtual environment (python {version})", folder.parent)
    venv_python = folder / "bin" / "python"
    requirements = seq_requirements()
    with_seq = any(kind in PIP_STEPS for kind, _ in image.steps)
    if not with_seq:
        say(f"image {key}: installing seq's requirements")
        _pip(venv_python, requirements, key, "installing seq's own requirements", folder)
    for kind, items in image.steps:
        label = f"{kind}({', '.join(json.dumps(item) for item in items)})"
        if kind in PIP_STEPS:
            # pip_install uses uv too: the same resolver and cache, much faster than pip
            packages = list(items)
            if with_seq:  # seq's requirements are resolved together with the first pip step
                packages, with_seq = packages + requirements, False
                label += " (with seq's own requirements)"
            say(f"image {key}: {label}")
            _pip(venv_python, packages, key, label, folder)
        elif kind == "run_commands":
            for command_text in items:
                say(f"image {key}: run_commands({json.dumps(command_text)})")
                _run_command(command_text, folder, key)
        elif kind != "apt_install":  # apt requirements were checked before the build
            raise ImageBuildError(f"image {key}: unknown build step {kind!r}.")
    _link_seq(folder)
    say(f"image {key}: checking that seq imports")
    check = subprocess.run(
        [str(venv_python), "-c", "import seq.engine.worker"],
        capture_output=True,
        text=True,
        cwd=folder,
        env=_clean_env(),
    )
    if check.returncode != 0:
        raise ImageBuildError(
            f"image {key}: seq does not import in the built environment: {_reason(check.stderr)}"
        )


def _find_python(version: str) -> str:
    """What to give `uv venv --python`: this interpreter when its version matches, else an
    interpreter of that version found on this machine, else the version (uv finds or downloads it)."""
    if version == f"{sys.version_info.major}.{sys.version_info.minor}":
        return sys.executable
    candidates: list[str | Path | None] = [shutil.which(f"python{version}")]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates += sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True)
    candidates += [Path(f"/usr/bin/python{version}"), Path(f"/usr/local/bin/python{version}")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            try:  # a pyenv shim exists but may fail for a version that is not active
                out = subprocess.run(
                    [str(candidate), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
            except (OSError, subprocess.SubprocessError):
                continue
            if out.returncode == 0 and out.stdout.strip() == version:
                return str(candidate)
    return version


def _uv(args: list[str], key: str, what: str, cwd: Path) -> None:
    try:
        from uv import find_uv_bin
    except ImportError as error:
        raise ImageBuildError(f"image {key}: uv is needed to build images; `pip install uv`.") from error

    env = {**_clean_env(), "NO_COLOR": "1", "UV_NO_PROGRESS": "1"}
    done = subprocess.run([find_uv_bin(), *args], capture_output=True, text=True, cwd=cwd, env=env)
    if done.returncode != 0:
        raise ImageBuildError(f"image {key}: {what} failed: {_reason(done.stderr or done.stdout)}")


def _pip(venv_python: Path, packages: list[str], key: str, what: str, cwd: Path) -> None:
    # Bytecode compiled now: every worker of every eval imports from the image, and one that cannot
    # write .pyc files (PYTHONDONTWRITEBYTECODE, a read-only home) would compile at each start.
    args = ["pip", "install", "--python", str(venv_python), "--compile-bytecode"]
    sources = []
    for folder in FIND_LINKS:
        if Path(folder).is_dir():
            sources += ["--find-links", folder]
    for folder in EXTRA_INDEXES:
        if Path(folder).is_dir():
            sources += ["--extra-index-url", Path(folder).as_uri()]
    if any(flag == "--extra-index-url" for flag in sources):
        # like pip: the best version across all indexes (uv's default takes the first index that
        # has a package at all, and a local index holding one release would hide PyPI's others)
        sources += ["--index-strategy", "unsafe-best-match"]
    _uv(args + sources + packages, key, what, cwd)


def _run_command(command: str, folder: Path, key: str) -> None:
    env = _clean_env()
    env["VIRTUAL_ENV"] = str(folder)
    env["PATH"] = f"{folder / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=folder, env=env)
    if done.returncode != 0:
        output = done.stderr.strip() or done.stdout.strip()
        raise ImageBuildError(
            f"image {key}: run_commands({json.dumps(command)}) failed with exit status {done.returncode}"
            + (f": {_reason(output)}" if output else ".")
        )


def _check_apt(image: Image, key: str, say: Callable) -> None:
    packages = [item for kind, items in image.steps if kind == "apt_install" for item in items]
    if not packages:
        return
    if shutil.which("dpkg-query") is None:
        say(f"image {key}: no dpkg on this machine; apt requirements {', '.join(packages)} not checked")
        return
    missing = []
    for package in packages:
        name = package.split("=", 1)[0].strip()
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True, env=_clean_env()
        )
        if done.returncode != 0 or not done.stdout.strip().endswith(" installed"):
            missing.append(name)
    if missing:
        raise ImageBuildError(
            f"image {key}: apt_install({', '.join(json.dumps(p) for p in packages)}) needs "
            f"{', '.join(missing)}, not installed on this machine (seq does not install system packages); "
            f"install with `sudo apt-get install -y {' '.join(missing)}`."
        )
    say(f"image {key}: apt requirements present: {', '.join(packages)}")


def _link_seq(folder: Path) -> None:
    """Make the `seq` this process runs importable in the image: a symlink in `seq-link/` (with a
    minimal dist-info for its version), and a `.pth` file naming that folder by a relative path."""
    link_dir = folder / LINK_DIR
    link_dir.mkdir(exist_ok=True)
    target = Path(__file__).resolve().parents[1]  # the seq package this module belongs to
    link = link_dir / "seq"
    if not link.is_symlink() or Path(os.readlink(link)) != target:
        fresh = link_dir / f".seq-{uuid.uuid4().hex[:8]}"
        fresh.symlink_to(target, target_is_directory=True)
        os.replace(fresh, link)
    from seq._version import __version__ as version

    dist_info = link_dir / f"seq-{version}.dist-info"
    if not (dist_info / "METADATA").exists():
        for old in link_dir.glob("seq-*.dist-info"):
            shutil.rmtree(old, ignore_errors=True)
        dist_info.mkdir(exist_ok=True)
        (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: seq\nVersion: {version}\n")
    for site_packages in folder.glob("lib/python*/site-packages"):
        pth = site_packages / PTH_FILE
        relative = os.path.relpath(link_dir, site_packages)  # .pth lines are relative to their folder
        if not pth.exists() or pth.read_text().strip() != relative:
            pth.write_text(relative + "\n")


def _clean_env() -> dict[str, str]:
    """This process's environment without what would point a child at this process's Python."""
    drop = {"VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "CONDA_PREFIX", "UV_PROJECT_ENVIRONMENT"}
    return {name: value for name, value in os.environ.items() if name not in drop}


def _reason(text: str) -> str:
    """uv's (or a command's) meaningful error lines as one line: from its first `error:` on."""
    lines = [_ANSI.sub("", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    for index, line in enumerate(lines):
        if line.lower().startswith(("error:", "×")):
            lines = lines[index:]
            break
    else:
        lines = lines[-6:]  # no error line: the end of the output
    parts = [re.sub(r"^(error|cause|×|╰─▶|help|hint):?\s*", "", line, flags=re.I) for line in lines]
    reason = ": ".join(part for part in parts if part)
    reason = re.sub(r"\s+", " ", reason).strip() or "no output"
    return reason if len(reason) <= 800 else reason[:797] + "..."


def _size(path: Path) -> int:
    total, seen = 0, set()
    for root, _, files in os.walk(path):
        for name in files:
            try:
                stat = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_size
    return total
