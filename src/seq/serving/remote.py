"""A policy already served at a URL (`--policy-url`), recorded as a policy of its own.

A `seq` server names its policy, version and code sha256 in its greeting, over any protocol, and
is recorded as that policy. Any other server (an openpi or vla-eval one) is recorded under the
name the user gives (`policy_name=`, `--policy-name`), else a name derived from its greeting (a
vla-eval server's `model_server`, an openpi server's `name`) and its URL's host and port, so two
servers are two policies in `seq eval ls`, `benchmark evals` and comparisons. Its version is its
greeting's content: the same server saying the same hello is the same version. The URL, the
protocol and the greeting go in the eval's manifest (`arms[i]["server"]`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from seq.authoring.params import Parameter
from seq.errors import SeqInputError
from seq.record.states import PolicyProtocol
from seq.record.store import Store, VersionRow
from seq.registry.builtins import BUILTINS

DEFAULT_NAMES: dict[str, str] = {
    PolicyProtocol.OPENPI: "openpi-server",
    PolicyProtocol.VLA_EVAL: "vla-eval-server",
    PolicyProtocol.SEQ: "remote",
}


@dataclass(frozen=True)
class ServedPolicy:
    """The version a served policy is recorded as, its declared parameters (each one's default the
    value the server runs with) and what its server said (`server`: url, protocol, metadata:
    plain JSON)."""

    row: VersionRow
    parameters: dict[str, Parameter] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)


def _plain(value: Any) -> Any:
    """`value` as plain JSON data (an openpi greeting may hold bytes or numpy values)."""

    def default(item: Any) -> Any:
        if isinstance(item, bytes):
            return item.decode("utf-8", errors="replace")
        for method in ("tolist", "item"):
            if hasattr(item, method):
                return getattr(item, method)()
        return str(item)

    return json.loads(json.dumps(value, default=default, sort_keys=True))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def _kebab(name: str) -> str:
    """`CogACTModelServer` → `cog-act-model-server`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def derived_name(url: str, protocol: str, metadata: dict[str, Any]) -> str:
    """A name for an openpi or vla-eval server: what its greeting calls it, then where it runs."""
    called = metadata.get("model_server") if protocol == PolicyProtocol.VLA_EVAL else metadata.get("name")
    base = _kebab(_slug(called)) if isinstance(called, str) and _slug(called) else DEFAULT_NAMES[protocol]
    where = urlsplit(url)
    parts = [base, where.hostname or "", str(where.port or ""), where.path]
    return "-".join(slug for slug in map(_slug, parts) if slug)


def check_policy_name(name: str, store: Store) -> None:
    """A name a served policy may be recorded under: no `@`, no spaces, not a code policy's."""
    if not name or "@" in name or any(char.isspace() for char in name):
        raise SeqInputError(f"--policy-name {name!r}: a policy name has no '@' and no spaces.")
    if name in BUILTINS["policy"] or any("remote" not in row.ref for row in store.versions("policy", name)):
        raise SeqInputError(
            f"--policy-name {name}: a policy deployed from code has this name; give the server another."
        )


def register_remote(url: str, protocol: str, store: Store, name: str | None = None) -> ServedPolicy:
    """Connect to the server at `url`, read its greeting and record the policy it serves."""
    from seq.serving.client import connect, parameters_of
    from seq.serving.remote_errors import RemotePolicyError, ServerUnreachable

    handle = connect(url, protocol=protocol, retries=2)
    try:
        handle.connect()  # type: ignore[attr-defined]
        metadata = _plain(dict(handle.metadata))  # type: ignore[attr-defined]
    except (ServerUnreachable, RemotePolicyError) as error:
        raise SeqInputError(f"--policy-url {url}: {error}") from None
    finally:
        handle.close()  # type: ignore[attr-defined]
    served = metadata.get("policy") if isinstance(metadata.get("policy"), dict) else {}
    parameters = parameters_of(metadata) if protocol == PolicyProtocol.SEQ else {}
    if name is not None:
        check_policy_name(name, store)
    elif served.get("name"):  # a seq server, over whichever protocol: the policy it names
        name = str(served["name"])
    else:
        name = derived_name(url, protocol, metadata)
    content = json.dumps(metadata, sort_keys=True).encode()
    sha = str(served.get("sha256") or hashlib.sha256(content).hexdigest())
    server = {"url": url, "protocol": protocol, "metadata": metadata}
    ref = {"remote": url, "protocol": protocol, "qualname": name}
    declared = {
        "name": name,
        "parameters": {p.name: p.describe() for p in parameters.values()},
        "remote": url,
        "protocol": protocol,
        "metadata": metadata,
    }
    row, _ = store.register_version("policy", name, sha, ref, declared)
    used = parameters_of(metadata, served=True) if protocol == PolicyProtocol.SEQ else {}
    return ServedPolicy(row, used, server)
