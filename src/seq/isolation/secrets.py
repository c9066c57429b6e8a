"""Secrets: values given to the simulator's process as environment variables, never to the policy.

Each secret is one file, `SEQ_HOME/secrets/<name>.json` (mode 0600, in a folder of mode 0700),
holding its name, the environment variable it sets, its value and when it was set. Listing never
shows a value, and a `Masker` replaces every value with `***` in text that leaves the simulator's
process (tracebacks, metrics, logs).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, overload

from seq.errors import SeqInputError
from seq.isolation.volumes import check_name
from seq.record.paths import seq_home

ENV_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MASK = "***"


@dataclass(frozen=True)
class SecretInfo:
    """What may be shown about a secret: never its value."""

    name: str
    env: str
    set_at: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "env": self.env, "set_at": self.set_at}


def secrets_root() -> Path:
    return seq_home() / "secrets"


def check_env_var(env_var: Any) -> str:
    if not isinstance(env_var, str) or not ENV_VAR.fullmatch(env_var):
        raise SeqInputError(
            f"environment variable {env_var!r}: expected letters, digits and '_', not starting with a digit."
        )
    return env_var


def set_secret(name: str, env_var: str, value: str) -> None:
    """Store (or replace) secret `name`, given to the simulator as `env_var=value`."""
    check_name(name, "secret")
    check_env_var(env_var)
    if not isinstance(value, str) or not value:
        raise SeqInputError(f"secret {name}: the value is empty; expected a non-empty string.")
    root = _secrets_folder()
    record = {
        "name": name,
        "env": env_var,
        "value": value,
        "set_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    temporary = root / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w") as handle:
            json.dump(record, handle)
            handle.write("\n")
        os.replace(temporary, root / f"{name}.json")
    finally:
        if temporary.exists():
            temporary.unlink()


def list_secrets() -> list[SecretInfo]:
    """Every secret's name, environment variable and when it was set, by name."""
    root = secrets_root()
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.glob("*.json")):
        record = _read(path)
        if record is not None:
            found.append(SecretInfo(record["name"], record["env"], record["set_at"]))
    return found


def remove_secret(name: str) -> None:
    """Delete secret `name`."""
    path = _path_or_error(name)
    path.unlink()


def secret_environment(names: Iterable[str]) -> dict[str, str]:
    """The environment variables the secrets `names` set: {ENV_VAR: value}."""
    environment: dict[str, str] = {}
    owners: dict[str, str] = {}
    for name in names:
        record = _read(_path_or_error(name))
        if record is None:
            raise SeqInputError(f"secret {name}: its file is unreadable (seq secret set {name} --env VAR).")
        env_var = record["env"]
        if env_var in environment and environment[env_var] != record["value"]:
            raise SeqInputError(
                f"secrets {owners[env_var]} and {name} both set {env_var}; expected one secret per variable."
            )
        environment[env_var] = record["value"]
        owners[env_var] = name
    return environment


class Masker:
    """Replaces every secret value with *** in text that leaves the simulator's process."""

    def __init__(self, values: Iterable[str]):
        unique = {value for value in values if isinstance(value, str) and value}
        self._values = sorted(unique, key=lambda value: (-len(value), value))  # longest first
        self._pattern = re.compile("|".join(map(re.escape, self._values))) if self._values else None

    @overload
    def text(self, value: str) -> str: ...
    @overload
    def text(self, value: None) -> None: ...
    def text(self, value: str | None) -> str | None:
        """`value` with every secret in it replaced by the mask."""
        if value is None or self._pattern is None:
            return value
        return self._pattern.sub(MASK, value)

    def value(self, obj: Any) -> Any:
        """`obj` with every string inside it masked: dicts (keys too), lists and tuples, recursively."""
        if self._pattern is None:
            return obj
        if isinstance(obj, str):
            return self._pattern.sub(MASK, obj)
        if isinstance(obj, dict):
            return {self.value(key): self.value(item) for key, item in obj.items()}
        if isinstance(obj, list):
            return [self.value(item) for item in obj]
        if isinstance(obj, tuple):
            items = [self.value(item) for item in obj]
            return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
        return obj

    def __bool__(self) -> bool:
        return bool(self._values)

    def __repr__(self) -> str:
        return f"Masker({len(self._values)} value(s))"


def _secrets_folder() -> Path:
    root = secrets_root()
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        if stat.S_IMODE(root.stat().st_mode) & 0o077:
            os.chmod(root, 0o700)
    return root


def _path_or_error(name: str) -> Path:
    check_name(name, "secret")
    path = secrets_root() / f"{name}.json"
    if not path.is_file():
        raise SeqInputError(f"secret {name}: not set (seq secret set {name} --env VAR).")
    return path


def _read(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not {"name", "env", "value", "set_at"} <= record.keys():
        return None
    return record
