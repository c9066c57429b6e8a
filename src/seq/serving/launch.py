"""`seq.serve(policy, …)`: serve a policy from a background thread of this process.

The policy's replicas are loaded first, in the calling thread (so a failing `@seq.load` raises
here); then an event loop in a daemon thread listens, and `serve` returns a `ServerHandle` once
the socket is bound. `seq policy serve` is the same call, waited on in the foreground.

A server bound to anything but loopback needs a token (`token=`, else `SEQ_SERVER_TOKEN`): a
policy server runs code on every frame it is sent.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import threading
from typing import TYPE_CHECKING, Any

from seq.errors import SeqInputError

if TYPE_CHECKING:  # the server is imported by `serve`: `seq eval run` loads this module, not it
    from seq.record.store import Store
    from seq.serving.server import PolicyServer

DEFAULT_MAX_MESSAGE_BYTES = 64 * 2**20


def is_loopback(host: str) -> bool:
    """Whether binding `host` listens on this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ServerHandle:
    """A running policy server: `.url`, `.stats()`, `.close()`; also a context manager."""

    def __init__(self, server: PolicyServer, host: str) -> None:
        self._server = server
        self.host = host
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._finished = threading.Event()  # (a join interrupted by Ctrl-C leaves is_alive() wrong)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="seq-policy-server", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    @property
    def metadata(self) -> dict[str, Any]:
        """What the server sends first on every connection (policy, parameters, capabilities)."""
        return self._server.metadata

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._stop = asyncio.Event()

        def started(port: int) -> None:
            self.port = port
            self._ready.set()

        from seq.serving.repeats import counting_repeats

        try:
            with counting_repeats():  # the loop's last callbacks too (asyncio's accept retries)
                self._loop.run_until_complete(self._server.run(self.host, self.port, started, self._stop))
        except BaseException as error:  # a bind error, mostly: reported by `serve`
            self._error = error
        finally:
            self._ready.set()
            self._loop.close()
            self._finished.set()

    def _start(self, port: int) -> None:
        self.port = port
        self._thread.start()
        self._ready.wait()
        if self._error is not None or not self._thread.is_alive():
            error = self._error
            detail = getattr(error, "strerror", None) or str(error)
            raise SeqInputError(
                f"serve: cannot listen on {self.host}:{port}: {detail}; "
                "choose another port (0 picks a free one)."
            )

    def stats(self) -> dict[str, Any]:
        """Requests, batches, the batch-size histogram, errors, connections and protocols."""
        return self._server.stats()

    def close(self) -> None:
        """Stop listening, close every connection and the replica threads. Idempotent."""
        if not self._finished.is_set() and self._stop is not None:
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass
            self._finished.wait(10.0)

    def wait(self) -> None:
        """Block until the server stops (Ctrl-C raises KeyboardInterrupt here)."""
        while not self._finished.wait(0.5):
            pass

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ServerHandle {self._server.host.row.label} at {self.url}>"


def serve(
    policy: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_batch_size: int = 8,
    max_wait_ms: float = 10.0,
    replicas: int = 1,
    params: dict[str, Any] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    store: Store | None = None,
    adapter: Any = None,
    token: str | None = None,
    handshake_timeout_s: float = 10.0,
    idle_timeout_s: float | None = 300.0,
    max_reply_bytes: int | None = None,
) -> ServerHandle:
    """Serve a policy over websockets; returns once it listens.

    Requests from all connections are gathered into batches (a batched `@seq.infer` gets each
    batch as one call).

    Args:
        policy: a name, `NAME@vN`, a built-in, a `@seq.policy` class or an instance.
        host: the address to bind; anything but loopback needs a `token`.
        port: the port; 0 picks a free one (see `ServerHandle.url`).
        max_batch_size: the most requests in one batch.
        max_wait_ms: how long a batch waits for more requests.
        replicas: instances of the policy, each computing in its own thread.
        params: the policy's declared parameters (a client may override them per episode).
        max_message_bytes: the largest request taken.
        store: the record the policy's name is resolved in (default: `Store()`).
        adapter: an adapter instance that transforms each observation before the policy and each
            action after it, on the server's side.
        token: required of every client (default: `$SEQ_SERVER_TOKEN`).
        handshake_timeout_s: a connection whose handshake takes longer is dropped.
        idle_timeout_s: a connection without a frame this long is closed (None: never).
        max_reply_bytes: a request whose reply would be larger is answered with an error naming
            it, before it is computed (`seq.serving.backpressure`; default: `max_message_bytes`).

    Returns:
        The running server's `ServerHandle` (`.url`, `.close()`, a context manager).

    Raises:
        SeqInputError: an option out of range, a missing token, or a policy that cannot be loaded.
    """
    for name, value, least in (("max_batch_size", max_batch_size, 1), ("replicas", replicas, 1)):
        if not isinstance(value, int) or value < least:
            raise SeqInputError(f"serve: {name} must be an integer of at least {least}, got {value!r}.")
    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise SeqInputError(f"serve: port must be 0-65535, got {port!r}.")
    if max_wait_ms < 0:
        raise SeqInputError(f"serve: max_wait_ms must be 0 or more, got {max_wait_ms!r}.")
    for name, size in (("max_message_bytes", max_message_bytes), ("max_reply_bytes", max_reply_bytes)):
        if size is not None and (not isinstance(size, int) or size < 1024):
            raise SeqInputError(f"serve: {name} must be at least 1024, got {size!r}.")
    from seq.serving.host import PolicyHost
    from seq.serving.server import PolicyServer
    from seq.serving.transport import TOKEN_VARIABLE

    token = token if token is not None else os.environ.get(TOKEN_VARIABLE) or None
    if token is not None and (not isinstance(token, str) or not token.strip() or len(token) > 4096):
        raise SeqInputError("serve: token must be a non-empty string (of at most 4096 characters).")
    if token is None and not is_loopback(host):
        raise SeqInputError(
            f"serve: binding to {host} (not loopback) needs a token: pass --token TOKEN "
            f"(token= in Python) or set {TOKEN_VARIABLE}."
        )
    for name, seconds in (("handshake_timeout_s", handshake_timeout_s), ("idle_timeout_s", idle_timeout_s)):
        if seconds is not None and not (isinstance(seconds, int | float) and seconds > 0):
            raise SeqInputError(f"serve: {name} must be a number of seconds above 0, got {seconds!r}.")
    policy_host = PolicyHost.load(policy, replicas, params, store)
    policy_host.adapter = adapter
    server = PolicyServer(
        policy_host,
        max_batch_size=max_batch_size,
        max_wait_ms=float(max_wait_ms),
        max_message_bytes=max_message_bytes,
        max_reply_bytes=max_reply_bytes,
        token=token,
        handshake_timeout_s=float(handshake_timeout_s),
        idle_timeout_s=None if idle_timeout_s is None else float(idle_timeout_s),
    )
    handle = ServerHandle(server, host)
    handle._start(port)
    return handle
