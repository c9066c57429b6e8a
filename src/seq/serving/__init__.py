"""Serving plane: how the episode loop reaches a policy (inline in the worker, or behind a socket).

- `serve(policy, …) -> ServerHandle`: a batching websocket server for any policy (`seq policy serve`).
- `RemotePolicy(url, …)` / `connect(url, protocol=…)`: the episode loop's handle on a served policy
  (a `seq`, openpi or vla-eval server), with the same `begin_episode` / `act` as `InlinePolicy`.

Names are imported lazily, so a worker that runs policies inline never imports the server.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "serve": "seq.serving.launch",
    "ServerHandle": "seq.serving.launch",
    "RemotePolicy": "seq.serving.client",
    "connect": "seq.serving.client",
    "ServerUnreachable": "seq.serving.remote_errors",
    "ServerLost": "seq.serving.remote_errors",
    "RemotePolicyError": "seq.serving.remote_errors",
    "MessageTooLarge": "seq.serving.remote_errors",
    "InlinePolicy": "seq.serving.inline",
    "PolicyHandle": "seq.serving.inline",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'seq.serving' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name]), name)
