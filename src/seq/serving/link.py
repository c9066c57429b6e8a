"""What each side of a client's connection needs of the others, as protocols: the server's
settings and the replica's loop for a `Connection`, and the connection for the session of each
wire protocol (`seq`, openpi, vla-eval). The concrete classes (`PolicyServer`, `Replica`,
`Connection`) satisfy them without naming them, so no module of the server names one that names
it back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Protocol

from seq.serving.batcher import Batcher
from seq.serving.host import PolicyHost, Request
from seq.serving.spaces import SpaceCache


class ServerSettings(Protocol):
    """The server a replica and its connections belong to: its policy host, its limits, and
    the lock over what its replicas share."""

    host: PolicyHost
    lock: threading.Lock
    max_batch_size: int
    max_wait_ms: float
    default_key: str
    max_message_bytes: int
    max_reply_bytes: int
    idle_timeout_s: float | None
    metadata: dict[str, Any]
    spaces: SpaceCache

    def count_protocol(self, name: str) -> None: ...


class ReplicaLoop(Protocol):
    """The replica a connection runs on: its event loop and its batcher."""

    index: int
    loop: asyncio.AbstractEventLoop
    batcher: Batcher

    def closed(self, connection: Any) -> None: ...


class ClientLink(Protocol):
    """A client's connection, as the session of its wire protocol uses it."""

    server: ServerSettings
    replica: ReplicaLoop

    def send(self, data: bytes | str) -> None: ...
    def submit(self, *requests: Request) -> None: ...
    @property
    def request(self) -> Callable[..., Request]:
        """`Connection.request`: an act for the replica's batcher."""
        ...
