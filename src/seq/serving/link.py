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

    @property
    def host(self) -> PolicyHost: ...
    @property
    def lock(self) -> threading.Lock: ...
    @property
    def max_batch_size(self) -> int: ...
    @property
    def max_wait_ms(self) -> float: ...
    @property
    def default_key(self) -> str: ...
    @property
    def max_message_bytes(self) -> int: ...
    @property
    def max_reply_bytes(self) -> int: ...
    @property
    def idle_timeout_s(self) -> float | None: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def spaces(self) -> SpaceCache: ...
    def count_protocol(self, name: str) -> None: ...


class ReplicaLoop(Protocol):
    """The replica a connection runs on: its event loop and its batcher."""

    @property
    def index(self) -> int: ...
    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...
    @property
    def batcher(self) -> Batcher: ...
    def closed(self, connection: Any) -> None: ...


class ClientLink(Protocol):
    """A client's connection, as the session of its wire protocol uses it."""

    @property
    def server(self) -> ServerSettings: ...
    @property
    def replica(self) -> ReplicaLoop: ...
    def send(self, data: bytes | str) -> None: ...
    @property
    def request(self) -> Callable[..., Request]:
        """`Connection.request`: an act for the replica's batcher, answered by its `reply`."""
        ...

    def submit(self, *requests: Request) -> None: ...
