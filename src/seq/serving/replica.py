"""A replica: one policy instance with its own thread, event loop, batcher and connections.

The server's front loop accepts each connection, answers HTTP and does the websocket handshake,
then hands the socket (and the websocket protocol's state) to the replica with the fewest
connections. From then on that connection's frames are read, batched, computed and answered in
the replica's thread alone.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import TYPE_CHECKING

from seq.serving.batcher import Batcher, Stats
from seq.serving.connection import Connection, Frames
from seq.serving.link import ServerSettings

if TYPE_CHECKING:
    from websockets.server import ServerProtocol

log = logging.getLogger("seq.serving")


class Replica:
    def __init__(self, server: ServerSettings, index: int, stats: Stats) -> None:
        self.server, self.index = server, index
        self.batcher = Batcher(server.host, index, server.max_batch_size, server.max_wait_ms, stats)
        self.connections: set[Connection] = set()
        self.assigned = 0  # connections handed to this replica and not yet closed (under server.lock)
        self.loop = asyncio.new_event_loop()
        self.batcher.start(self.loop)
        self._thread = threading.Thread(target=self._main, name=f"seq-replica-{index}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def adopt(self, sock: socket.socket, protocol: ServerProtocol, frames: Frames) -> None:
        """Take over a connection from the front loop (thread-safe)."""
        self.loop.call_soon_threadsafe(self._adopt, sock, protocol, frames)

    def _adopt(self, sock: socket.socket, protocol: ServerProtocol, frames: Frames) -> None:
        connection = Connection(self.server, self, protocol, frames)
        self.connections.add(connection)
        self.batcher.connections += 1

        async def attach() -> None:
            try:
                await self.loop.connect_accepted_socket(lambda: connection, sock)
            except Exception:
                log.exception("a connection could not be handed to replica %d", self.index)
                connection.connection_lost(None)
                sock.close()

        self.loop.create_task(attach())

    def closed(self, connection: Connection) -> None:
        if connection in self.connections:
            self.connections.discard(connection)
            self.batcher.connection_closed()
            self.server.host.disconnected(self.index, id(connection))
            with self.server.lock:
                self.assigned -= 1

    def stop(self, timeout_s: float = 5.0) -> None:
        """Close every connection with 1001, answer what is queued, stop the thread."""
        if not self._thread.is_alive():
            return

        def shutdown() -> None:
            for connection in list(self.connections):
                connection.shutdown()
            self.batcher.stop()
            self.loop.call_later(0.05, self.loop.stop)  # let the transports close their sockets

        try:
            self.loop.call_soon_threadsafe(shutdown)
        except RuntimeError:
            return
        self._thread.join(timeout_s)
