"""A policy already served somewhere (`--policy-url`), registered as a version from its greeting."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from seq.errors import SeqInputError
from seq.record.store import Store, VersionRow
from seq.serving.client import connect, parameters_of
from seq.serving.errors import ServerUnreachable


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def register_remote(url: str, protocol: str, store: Store) -> tuple[VersionRow, dict[str, Any]]:
    """The version of a policy already served at `url`, read from its greeting: a `seq` server names
    its policy, version and code sha256 (and declared parameters); an openpi or vla-eval server is
    versioned by what its greeting says. Returns the row and the declared parameters."""
    handle = connect(url, protocol=protocol, retries=2)
    try:
        handle.connect()  # type: ignore[attr-defined]
        metadata = dict(handle.metadata)  # type: ignore[attr-defined]
    except ServerUnreachable as error:
        raise SeqInputError(f"--policy-url {url}: {error}") from None
    finally:
        handle.close()  # type: ignore[attr-defined]
    if protocol == "seq":
        policy = metadata.get("policy") or {}
        name, sha = str(policy.get("name") or "remote"), str(policy.get("sha256") or "")
        parameters = parameters_of(metadata)
    else:
        name = f"{protocol}-server"
        sha, parameters = _sha256(json.dumps(metadata, sort_keys=True, default=str).encode()), {}
    ref = {"remote": url, "protocol": protocol, "qualname": name}
    declared = {
        "name": name,
        "parameters": {p.name: {"type": p.type, "default": p.default} for p in parameters.values()},
        "remote": url,
    }
    row, _ = store.register_version("policy", name, sha or _sha256(url.encode()), ref, declared)
    return row, parameters
