"""What a benchmark declares about where it runs: image, assets, secrets and recordings.

They are stored with the benchmark's version (as plain data) and honoured by the engine: an image
is a virtual environment built once (`seq.isolation.images`), a volume is mounted read-only, a
secret becomes an environment variable of the benchmark's processes only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Image:
    """A description of a Python environment: a base and the steps that build it.

    >>> seq.Image.debian_slim().uv_pip_install("mujoco==3.2.3", "robosuite==1.4.1")
    """

    base: str = "debian-slim"
    steps: tuple[tuple[str, tuple[str, ...]], ...] = ()
    environment: tuple[tuple[str, str], ...] = ()

    @classmethod
    def debian_slim(cls, python_version: str | None = None) -> Image:
        return cls(base="debian-slim" + (f"-py{python_version}" if python_version else ""))

    def _with(self, kind: str, items: tuple[str, ...]) -> Image:
        return Image(self.base, self.steps + ((kind, tuple(items)),), self.environment)

    def uv_pip_install(self, *packages: str) -> Image:
        return self._with("uv_pip_install", packages)

    def pip_install(self, *packages: str) -> Image:
        return self._with("pip_install", packages)

    def apt_install(self, *packages: str) -> Image:
        return self._with("apt_install", packages)

    def run_commands(self, *commands: str) -> Image:
        return self._with("run_commands", commands)

    def env(self, variables: dict[str, str]) -> Image:
        return Image(self.base, self.steps, self.environment + tuple(sorted(variables.items())))

    @contextmanager
    def imports(self) -> Iterator[None]:
        """Import what only the image has: outside an image's workers (where `seq deploy` and the
        runner read the file), a missing module is skipped; inside, it raises as usual.

        >>> image = seq.Image.debian_slim().uv_pip_install("robosuite==1.5.2")
        >>> with image.imports():
        ...     import robosuite
        """
        try:
            yield
        except ImportError:
            if os.environ.get("SEQ_IMAGE"):
                raise

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "steps": [[kind, list(items)] for kind, items in self.steps],
            "env": dict(self.environment),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Image:
        """The image a `to_dict()` described (as stored with a benchmark's version)."""
        steps = tuple((str(kind), tuple(map(str, items))) for kind, items in data.get("steps", []))
        variables = tuple(sorted((str(k), str(v)) for k, v in (data.get("env") or {}).items()))
        return cls(str(data.get("base", "debian-slim")), steps, variables)


@dataclass(frozen=True)
class Volume:
    """A named, versioned folder of files mounted read-only for a benchmark (`/assets`)."""

    name: str

    @classmethod
    def from_name(cls, name: str) -> Volume:
        return cls(name)

    def to_dict(self) -> dict[str, Any]:
        return {"volume": self.name}


@dataclass(frozen=True)
class Secret:
    """A named secret given to the simulator as environment variables, never to the policy."""

    name: str

    @classmethod
    def from_name(cls, name: str) -> Secret:
        return cls(name)

    def to_dict(self) -> dict[str, Any]:
        return {"secret": self.name}


@dataclass(frozen=True)
class Record:
    """Record an mp4 of each task's first seed from `env.render(camera)` at `fps`."""

    camera: str | None = None
    fps: int = 20
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"camera": self.camera, "fps": self.fps, **self.options}


def describe(value: Any) -> Any:
    """A JSON-ready form of a declaration (or of a plain value)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [describe(item) for item in value]
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return repr(value)
