"""A synchronous websocket connection for the episode loop's clients.

It drives the `websockets` library's sans-I/O protocol (`websockets.client.ClientProtocol`) over a
blocking socket in the caller's own thread. `websockets.sync.client` reads the socket in a
background thread and hands each message over to the caller; on loopback that hand-off costs
about as much as the rest of a round trip, and every act of an episode pays it.

A client presents its token (`token=`, else `$SEQ_SERVER_TOKEN`) as `Authorization: Bearer` at the
handshake, and takes frames of at most `max_frame_bytes` from the server: a server is a peer on the
network like any other.
"""

from __future__ import annotations

import os
import select
import socket
import ssl
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import TypeVar

from websockets.client import ClientProtocol
from websockets.frames import Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from seq.serving.remote_errors import ServerLost, ServerRefusedToken, ServerUnreachable

T = TypeVar("T")
SEND_TIMEOUT_S = 60.0  # a server that takes no data for this long is gone
TOKEN_VARIABLE = "SEQ_SERVER_TOKEN"  # the token a server requires and its clients present
MAX_FRAME_BYTES = 64 * 2**20  # the largest frame a client takes from a server


class ConnectionLost(ConnectionError):
    """The connection closed (or the peer vanished) while a message was expected."""


class SyncSocket:
    """One websocket connection: `send(bytes | str)`, `recv(timeout) -> bytes | str`, `close()`."""

    def __init__(
        self,
        url: str,
        *,
        subprotocols: Sequence[str] = (),
        open_timeout_s: float = 10.0,
        token: str | None = None,
        max_frame_bytes: int | None = MAX_FRAME_BYTES,
    ) -> None:
        uri = parse_uri(url)
        self.url = url
        self.max_frame_bytes = max_frame_bytes
        self.protocol = ClientProtocol(
            uri, subprotocols=[Subprotocol(s) for s in subprotocols] or None, max_size=max_frame_bytes
        )
        self.sock = socket.create_connection((uri.host, uri.port), timeout=open_timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if uri.secure:
            self.sock = ssl.create_default_context().wrap_socket(self.sock, server_hostname=uri.host)
        self._events: deque = deque()
        self._parts: list[bytes] = []
        self._text = False
        request = self.protocol.connect()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        self.protocol.send_request(request)
        self._flush()
        deadline = time.monotonic() + open_timeout_s
        while not self._events:
            self._read(deadline)
        response = self._events.popleft()
        if self.protocol.handshake_exc is not None or not isinstance(response, Response):
            self.sock.close()
            if isinstance(response, Response) and response.status_code == 401:
                raise ServerRefusedToken(_token_refusal(url, token), url)
            raise ConnectionLost(f"the websocket handshake failed: {self.protocol.handshake_exc}")
        self.subprotocol: str | None = self.protocol.subprotocol

    def _flush(self) -> None:
        writes = self.protocol.data_to_send()
        if writes:
            self.sock.settimeout(SEND_TIMEOUT_S)  # (a read may have left a short timeout behind)
        for data in writes:
            if data:
                self.sock.sendall(data)
            else:
                try:
                    self.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

    def _read(self, deadline: float | None) -> None:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self.sock.settimeout(remaining)
        else:
            self.sock.settimeout(None)
        try:
            data = self.sock.recv(1 << 20)
        except TimeoutError:  # socket.timeout
            raise TimeoutError from None
        except OSError as error:
            raise ConnectionLost(f"{type(error).__name__}: {error}") from None
        if data:
            self.protocol.receive_data(data)
        else:
            self.protocol.receive_eof()
        self._events.extend(self.protocol.events_received())
        try:
            self._flush()  # pongs and close replies
        except OSError:
            pass
        if not data and not self._events:
            raise ConnectionLost(self._closed_reason())

    def _closed_reason(self) -> str:
        sent, received = self.protocol.close_sent, self.protocol.close_rcvd
        if sent is not None and sent.code == 1009 and not self.protocol.close_rcvd_then_sent:
            return f"the server sent a frame over this client's limit of {self.max_frame_bytes} bytes"
        if received is not None:
            return f"the server closed the connection: {received}"
        return "the connection closed"

    @property
    def open(self) -> bool:
        return self.protocol.state is State.OPEN

    def alive(self) -> bool:
        """Whether the connection is still open, noticing (without waiting) a server that went
        away since the last reply."""
        if not self.open:
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
            if readable:
                self._read(time.monotonic() + 1.0)  # a close, an EOF or a ping
        except (ConnectionLost, TimeoutError, OSError, ValueError):
            return False
        return self.open

    def send(self, data: bytes | str) -> None:
        if self.protocol.state is not State.OPEN:
            raise ConnectionLost(self._closed_reason())
        if isinstance(data, str):
            self.protocol.send_text(data.encode())
        else:
            self.protocol.send_binary(data)
        try:
            self._flush()
        except OSError as error:
            raise ConnectionLost(f"{type(error).__name__}: {error}") from None

    def recv(self, timeout_s: float | None = None) -> bytes | str:
        """The next data message; TimeoutError after `timeout_s`, ConnectionLost when it closed."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            while not self._events:
                if self.protocol.state is State.CLOSED:
                    raise ConnectionLost(self._closed_reason())
                self._read(deadline)
            frame = self._events.popleft()
            if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
                self._parts, self._text = [frame.data], frame.opcode is Opcode.TEXT
            elif frame.opcode is Opcode.CONT:
                self._parts.append(frame.data)
            elif frame.opcode is Opcode.CLOSE:
                raise ConnectionLost(self._closed_reason())
            else:  # ping / pong: answered by the protocol
                continue
            if frame.fin:
                data = b"".join(self._parts) if len(self._parts) > 1 else bytes(self._parts[0])
                self._parts = []
                return data.decode() if self._text else data

    def close(self) -> None:
        try:
            if self.protocol.state is State.OPEN:
                self.protocol.send_close(1000)
                self._flush()
        except Exception:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


def _token_refusal(url: str, token: str | None) -> str:
    if token:
        return (
            f"the policy server at {url} refused the token it was given "
            f"(check --policy-token or {TOKEN_VARIABLE})."
        )
    return f"the policy server at {url} needs a token: give --policy-token TOKEN or set {TOKEN_VARIABLE}."


def with_backoff(url: str, attempt: Callable[[], T], retries: int, backoff_s: float) -> T:
    """Call `attempt` (which connects) until it succeeds, waiting `backoff_s`, then twice that, …
    between tries; after `retries` retries, raise ServerUnreachable naming the last failure. A
    refused token (ServerRefusedToken) is raised at once: trying again cannot help."""
    delay, last = backoff_s, None
    for tries in range(retries + 1):
        try:
            return attempt()
        except (OSError, ConnectionLost, TimeoutError) as error:
            last = error
        if tries < retries:
            time.sleep(delay)
            delay *= 2
    raise ServerUnreachable(
        f"the policy server at {url} is unreachable after {retries + 1} attempt{'s' if retries else ''} "
        f"({type(last).__name__}: {last}).",
        url,
    )


class BaseClient:
    """What the clients of every protocol share: connect (with backoff) at an episode's start,
    lockstep request and reply, and a clear ServerUnreachable when the server cannot be reached
    (`ServerLost` when it goes away during an episode).

    A connection that failed is dropped; the next `begin_episode` reconnects. Once a connect has
    failed after all its retries, the next one tries once, without waiting: a server that stayed
    down for the whole backoff is not waited for again at every episode (a success restores the
    retries). `token` (default: `$SEQ_SERVER_TOKEN`) is presented at the handshake;
    `max_frame_bytes` bounds what the server may send.
    """

    subprotocols: tuple[str, ...] = ()

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float | None = 120.0,
        retries: int = 5,
        backoff_s: float = 0.25,
        open_timeout_s: float = 10.0,
        token: str | None = None,
        max_frame_bytes: int | None = MAX_FRAME_BYTES,
    ) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.open_timeout_s = open_timeout_s
        self.token = token if token is not None else os.environ.get(TOKEN_VARIABLE) or None
        self.max_frame_bytes = max_frame_bytes
        self.metadata: dict = {}
        self._sock: SyncSocket | None = None
        self._gave_up = False  # the last connect failed after all its retries

    def _handshake(self, sock: SyncSocket) -> dict:
        """Read or exchange the protocol's greeting; returns the server's metadata."""
        raise NotImplementedError

    def connect(self) -> None:
        """Connect unless connected; raises ServerUnreachable after the retries."""
        if self._sock is not None and self._sock.alive():
            return
        self._drop()

        def attempt() -> SyncSocket:
            sock = SyncSocket(
                self.url,
                subprotocols=self.subprotocols,
                open_timeout_s=self.open_timeout_s,
                token=self.token,
                max_frame_bytes=self.max_frame_bytes,
            )
            try:
                self.metadata = self._handshake(sock)
            except BaseException:
                sock.close()
                raise
            return sock

        try:
            self._sock = with_backoff(self.url, attempt, 0 if self._gave_up else self.retries, self.backoff_s)
        except ServerUnreachable:
            self._gave_up = True
            raise
        self._gave_up = False

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _send(self, frame: bytes | str, what: str) -> None:
        if self._sock is None:
            raise ServerLost(
                f"not connected to the policy server at {self.url} (the connection was lost earlier "
                "in this episode; the next episode reconnects).",
                self.url,
            )
        try:
            self._sock.send(frame)
        except (ConnectionLost, OSError) as error:
            self._drop()
            raise ServerLost(
                f"the policy server at {self.url} went away during {what} ({error}).", self.url
            ) from None

    def _exchange(self, frame: bytes | str, what: str) -> bytes | str:
        """Send one frame and return the reply; the connection is dropped on any failure."""
        self._send(frame, what)
        assert self._sock is not None
        try:
            return self._sock.recv(self.timeout_s)
        except TimeoutError:
            self._drop()
            raise ServerLost(
                f"the policy server at {self.url} did not answer {what} within {self.timeout_s} s.", self.url
            ) from None
        except (ConnectionLost, OSError) as error:
            self._drop()
            raise ServerLost(
                f"the policy server at {self.url} went away during {what} ({error}).", self.url
            ) from None

    def close(self) -> None:
        self._drop()

    def __enter__(self) -> BaseClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
