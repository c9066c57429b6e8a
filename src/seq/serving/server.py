"""The policy server: one websocket endpoint that speaks `seq`, openpi and vla-eval.

A client that asked for the websocket subprotocol `seq.v1` speaks `seq` (`session.SeqSession`) and
is sent the server's hello first, `{type: "hello", payload: METADATA, seq: 0, timestamp}`. Any
other client's first frame decides: a vla-eval message (`type`, `payload`, `seq`, `timestamp`, a
`hello` first) makes the connection vla-eval, answered as vla-eval's servers answer; a client that
sends nothing is an openpi one and is sent the metadata itself, as openpi's server does (see
`connection.Connection`); anything else is an openpi observation.

HTTP on the same port, as JSON: `GET /health` (and openpi's `/healthz`) answers exactly
`{"status": "ok"}` once the policy is loaded, as vla-eval's servers do; `GET /metadata` the
hello's metadata (the policy, its parameters, the server's limits); `GET /stats` the batch
statistics with the queue's depth and the requests in flight now and at their peak; `/config`
reads and sets `max_batch_size` and `max_wait_time` while the server runs (`control`).

What a client may make the server hold is bounded per connection (`backpressure`), and the
server logs vla-eval's backpressure warnings at vla-eval's thresholds. Repeated identical errors
are logged once, then counted (`repeats`).

Guards: a connection that has not finished its websocket handshake `handshake_timeout_s` after it
opened is dropped, and one that sends nothing for `idle_timeout_s` while nothing of it is pending
is closed (1001). A server given a `token` answers the handshake (and `/stats`, `/metadata`) with
401 unless the client presents it: `Authorization: Bearer TOKEN` (openpi's `Api-Key TOKEN` too)
or, for clients that cannot set headers, `?token=TOKEN` in the URL. `/health` stays open.

Threads: the front event loop (asyncio, `websockets`' sans-I/O `ServerProtocol`) accepts
connections, answers HTTP and does the websocket handshake and hello; then it hands the connection
to a replica (`replica.Replica`), whose own thread and loop read, batch, compute and answer it.
So a policy that computes never delays an accept or a health check, and an act never waits for a
hand-off between threads, which on loopback costs as much as the rest of a round trip.
"""

from __future__ import annotations

import asyncio
import hmac
import http
import json
import logging
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

from websockets.http11 import Request as HttpRequest
from websockets.server import ServerProtocol
from websockets.typing import Subprotocol

from seq._version import __version__
from seq.serving import vlaeval
from seq.serving.backpressure import InFlight
from seq.serving.batcher import Stats
from seq.serving.codec import MAX_DEPTH, PROTOCOL_VERSION, SUBPROTOCOL
from seq.serving.connection import Frames
from seq.serving.control import answer_config
from seq.serving.host import PolicyHost, params_key
from seq.serving.images import MAX_FRAME_PIXELS
from seq.serving.replica import Replica
from seq.serving.spaces import SpaceCache

# websockets' own log: each connection opened and HTTP response sent are INFO, which the `seq`
# command shows (its progress lines); only its warnings and errors are worth a line there
log = logging.getLogger("seq.serving.websockets")
log.setLevel(logging.WARNING)


class PolicyServer:
    """The hosted policy, its replicas, and what every connection shares."""

    def __init__(
        self,
        host: PolicyHost,
        *,
        max_batch_size: int,
        max_wait_ms: float,
        max_message_bytes: int,
        token: str | None = None,
        handshake_timeout_s: float = 10.0,
        idle_timeout_s: float | None = 300.0,
        max_reply_bytes: int | None = None,
    ) -> None:
        self.host = host
        self.max_batch_size, self.max_wait_ms = max_batch_size, max_wait_ms
        self.max_message_bytes = max_message_bytes
        self.max_reply_bytes = max_reply_bytes or max_message_bytes
        self.token = token
        self.handshake_timeout_s, self.idle_timeout_s = handshake_timeout_s, idle_timeout_s
        self.spaces = SpaceCache()
        self.default_key = params_key(host.defaults)
        self.counters = Stats()
        self.replicas = [Replica(self, index, self.counters) for index in range(len(host.instances))]
        self.lock = threading.Lock()  # guards the counts below, read and written from several threads
        self.protocols = {"seq": 0, "openpi": 0, "vla-eval": 0}
        self.connections_total = 0
        self.front: set[FrontConnection] = set()
        self.metadata: dict[str, Any] = {
            "server": "seq",
            "seq_version": __version__,
            "protocol": "seq",
            "protocol_version": PROTOCOL_VERSION,
            "model_server": f"seq:{host.row.label}",
            **host.metadata(),
            "capabilities": {
                "batched": host.spec.batched,
                "max_batch_size": max_batch_size,
                "max_wait_ms": max_wait_ms,
                "replicas": len(host.instances),
                "max_message_bytes": max_message_bytes,
                "max_reply_bytes": self.max_reply_bytes,
                "max_depth": MAX_DEPTH,
                "max_frame_pixels": MAX_FRAME_PIXELS,
                "idle_timeout_s": idle_timeout_s,
                "image_encodings": ["raw", "jpeg"],
                "act_batch": True,
                "protocols": {"seq": PROTOCOL_VERSION, "openpi": 1, "vla-eval": vlaeval.PROTOCOL_VERSION},
            },
        }
        self.hello = vlaeval.pack_message("hello", self.metadata, 0)

    def count_protocol(self, name: str) -> None:
        with self.lock:
            self.protocols[name] += 1

    def in_flight(self) -> int:
        """Requests received and not answered yet, on every replica (read from any thread)."""
        return sum(replica.batcher.in_flight for replica in self.replicas)

    def stats(self) -> dict[str, Any]:
        """Requests, batches and their size histogram, errors, the queue's depth and the requests
        in flight (now and at their peak), connections (from any thread)."""
        with self.lock:
            protocols, total = dict(self.protocols), self.connections_total
        batchers = [replica.batcher for replica in self.replicas]
        return {
            "policy": self.host.row.label,
            **self.counters.snapshot(),
            "queued": sum(batcher.queued for batcher in batchers),
            "queued_peak": max(batcher.peak_queued for batcher in batchers),
            "in_flight": self.in_flight(),
            "in_flight_peak": max(batcher.peak_in_flight for batcher in batchers),
            "connections": sum(len(replica.connections) for replica in self.replicas),
            "connections_total": total,
            "protocols": protocols,
        }

    def config(self) -> dict[str, Any]:
        """The settings `/config` reads and sets, in vla-eval's names and units."""
        return {"max_batch_size": self.max_batch_size, "max_wait_time": self.max_wait_ms / 1000.0}

    def configure(self, key: str, value: Any) -> None:
        """Set `max_batch_size` or `max_wait_time` (seconds) on every replica, while serving."""
        if key == "max_batch_size":
            self.max_batch_size = value
            for replica in self.replicas:
                replica.batcher.max_batch_size = value
        elif key == "max_wait_time":
            self.max_wait_ms = value * 1000.0
            for replica in self.replicas:
                replica.batcher.max_wait_s = value
        self.metadata["capabilities"]["max_batch_size"] = self.max_batch_size
        self.metadata["capabilities"]["max_wait_ms"] = self.max_wait_ms

    def http_answer(self, path: str) -> tuple[http.HTTPStatus, Any] | None:
        """The status and JSON body for an HTTP request of `path`, or None to go on with the
        websocket handshake."""
        path, _, query = path.partition("?")
        if path in ("/health", "/healthz"):
            return http.HTTPStatus.OK, {"status": "ok"}
        if path == "/stats":
            return http.HTTPStatus.OK, self.stats()
        if path == "/metadata":
            return http.HTTPStatus.OK, self.metadata
        if path == "/config":
            return answer_config(query, self.config, self.configure)
        return None

    def refusal(self, request: HttpRequest) -> str | None:
        """Why `request` may not go on (no token, a wrong one), or None when it may."""
        if self.token is None or request.path.split("?", 1)[0] in ("/health", "/healthz"):
            return None
        presented = _presented_tokens(request)
        if not presented:
            return (
                "this policy server needs a token: send 'Authorization: Bearer TOKEN' "
                "(seq: --policy-token or SEQ_SERVER_TOKEN)."
            )
        expected = self.token.encode()
        if not any(hmac.compare_digest(token.encode(), expected) for token in presented):
            return "this policy server refused the token it was given."
        return None

    def replica_for_new_connection(self) -> Replica:
        """The replica with the fewest connections, which takes the new one."""
        with self.lock:
            replica = min(self.replicas, key=lambda replica: replica.assigned)
            replica.assigned += 1
        return replica

    async def run(self, host: str, port: int, started: Callable[[int], None], stop: asyncio.Event) -> None:
        """Listen until `stop` is set; `started(port)` is called once the socket is bound."""
        for replica in self.replicas:
            replica.start()
        recent = lambda: sum(replica.batcher.take_recent_peak() for replica in self.replicas)  # noqa: E731
        watch = asyncio.get_running_loop().create_task(InFlight(recent).watch())
        try:
            loop = asyncio.get_running_loop()
            listening = await loop.create_server(lambda: FrontConnection(self), host, port)
            started(listening.sockets[0].getsockname()[1])
            await stop.wait()
            listening.close()
            for connection in list(self.front):
                connection.transport.close()
        finally:
            watch.cancel()
            for replica in self.replicas:
                replica.stop()


def _presented_tokens(request: HttpRequest) -> list[str]:
    """The tokens a request carries: `Authorization: Bearer T` (or openpi's `Api-Key T`), and a
    `token` query parameter (for clients that cannot set headers)."""
    tokens = []
    header = request.headers.get("Authorization")
    if header:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() in ("bearer", "api-key") and value.strip():
            tokens.append(value.strip())
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(request.path).query)
    return tokens + query.get("token", [])[:1]


def _select_subprotocol(protocol: ServerProtocol, offered: Any) -> Subprotocol | None:
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in offered else None


class FrontConnection(asyncio.Protocol):
    """A new connection on the front loop: HTTP, the handshake and the hello, then a replica's."""

    def __init__(self, server: PolicyServer) -> None:
        self.server = server
        self.frames = Frames()
        self.upgraded = self.handed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.protocol = ServerProtocol(
            select_subprotocol=_select_subprotocol, max_size=self.server.max_message_bytes, logger=log
        )
        self.server.front.add(self)
        self.deadline = asyncio.get_running_loop().call_later(
            self.server.handshake_timeout_s, self._handshake_expired
        )

    def _handshake_expired(self) -> None:
        """No handshake (or no hand-off) in time: a slow or silent peer holds no socket."""
        if not self.handed:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            if isinstance(event, HttpRequest):
                self._handshake(event)
            else:
                self.frames.feed(event)  # a client may speak before the hand-off
        self._flush()
        if self.upgraded and not self.handed:
            self._hand_off()

    def eof_received(self) -> bool | None:
        self.protocol.receive_eof()
        self._flush()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.deadline.cancel()
        self.server.front.discard(self)

    def _flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)
            else:
                self.transport.close()

    def _handshake(self, request: HttpRequest) -> None:
        refusal = self.server.refusal(request)
        if refusal is not None:
            response = self.protocol.reject(http.HTTPStatus.UNAUTHORIZED, f"seq: {refusal}\n")
            response.headers["WWW-Authenticate"] = "Bearer"
            self.protocol.send_response(response)
            return
        answer = self.server.http_answer(request.path)
        if answer is not None:
            status, body = answer
            response = self.protocol.reject(status, json.dumps(body) + "\n")
            del response.headers["Content-Type"]
            response.headers["Content-Type"] = "application/json"
            self.protocol.send_response(response)
            return
        response = self.protocol.accept(request)
        self.protocol.send_response(response)
        if response.status_code == 101:
            self.upgraded = True
            if self.protocol.subprotocol == SUBPROTOCOL:
                self.server.count_protocol("seq")
                self.protocol.send_binary(self.server.hello)  # other peers: see connection.Connection
            with self.server.lock:
                self.server.connections_total += 1

    def _hand_off(self) -> None:
        """Give the socket and the protocol's state to a replica, once the hello is written."""
        if self.transport.is_closing():
            return
        if self.transport.get_write_buffer_size():
            asyncio.get_running_loop().call_later(0.001, self._hand_off)
            return
        self.handed = True
        self.deadline.cancel()
        self.transport.pause_reading()
        sock = self.transport.get_extra_info("socket").dup()  # the connection lives on in the copy
        self.transport.close()
        self.server.replica_for_new_connection().adopt(sock, self.protocol, self.frames)
