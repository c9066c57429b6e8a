"""One client's websocket connection, on its replica's event loop.

The `websockets` library's sans-I/O protocol (`ServerProtocol`, which the front loop used for the
handshake) is driven from this `asyncio.Protocol`'s callbacks: a frame is decoded and queued for
the batcher in the callback that received it, and the answer is written by the callback that got
the outcome. Frames are answered in order, one at a time.

A client that did not ask for the `seq` subprotocol is an openpi or a vla-eval one, and the two
greet differently: a vla-eval client says hello first and is answered; an openpi client waits for
the server's metadata. So the server waits up to `GREETING_WAIT_S` for the client's first frame,
then sends an openpi client the metadata, as openpi's own server does.

A policy may write into its observation: the decoders hand out arrays of their own (one copy out
of the frame), and decoded images are copies too. A connection that sends
nothing for the server's `idle_timeout_s` while nothing of it is pending is closed (1001); one
whose frame the session failed to handle, or whose answer failed (a bug, memory), gets an error
frame in its protocol answering that frame: a client is never left waiting in silence.

Backpressure (`seq.serving.backpressure`): the connection stops reading its socket while
`MAX_WAITING_FRAMES` frames (or `max_message_bytes` of them) wait to be handled, or while its
replies not yet read by the client exceed `WRITE_HIGH_BYTES`; it reads again once they are
handled, or taken down to `WRITE_LOW_BYTES`. A connection whose client has not read its replies
for `idle_timeout_s` is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from websockets.frames import Frame, Opcode
from websockets.protocol import State

from seq.serving import openpi, vlaeval
from seq.serving.backpressure import MAX_WAITING_FRAMES, WRITE_HIGH_BYTES, WRITE_LOW_BYTES
from seq.serving.codec import SUBPROTOCOL, CodecError
from seq.serving.host import Outcome, Request
from seq.serving.link import ReplicaLoop, ServerSettings
from seq.serving.openpi import OpenPiSession
from seq.serving.session import SeqSession
from seq.serving.vlaeval_session import VlaEvalSession

if TYPE_CHECKING:
    from websockets.server import ServerProtocol


GREETING_WAIT_S = 1.0  # how long a client has to say hello before it is taken for an openpi one

log = logging.getLogger("seq.serving")


class Frames:
    """Reassembles websocket messages from frames (text messages are decoded)."""

    def __init__(self) -> None:
        self.ready: deque[bytes | str] = deque()
        self._parts: list[bytes | bytearray | memoryview] = []
        self._text = False

    def feed(self, frame: object) -> None:
        """Take one event of the websocket protocol: a frame of a message, or else nothing to keep."""
        if not isinstance(frame, Frame) or frame.opcode not in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
            return  # ping, pong, close: the protocol answers those; HTTP events are not messages
        if frame.opcode is not Opcode.CONT:
            self._parts, self._text = [], frame.opcode is Opcode.TEXT
        self._parts.append(frame.data)
        if frame.fin:
            data = b"".join(self._parts) if len(self._parts) > 1 else bytes(self._parts[0])
            self._parts = []
            self.ready.append(data.decode(errors="replace") if self._text else data)

    def waiting_bytes(self) -> int:
        return sum(len(frame) for frame in self.ready)


class Connection(asyncio.Protocol):
    """One client, owned by one replica."""

    def __init__(
        self, server: ServerSettings, replica: ReplicaLoop, protocol: ServerProtocol, frames: Frames
    ) -> None:
        self.server, self.replica, self.protocol, self.frames = server, replica, protocol, frames
        self.transport: asyncio.Transport | None = None
        self.session: Any = SeqSession(self) if protocol.subprotocol == SUBPROTOCOL else None
        self._busy = False
        self._closed = False
        self._greeting: asyncio.TimerHandle | None = None
        self._heard = 0.0  # the loop's time of the last data or answer
        self._idle: asyncio.TimerHandle | None = None
        self._reading = True
        self._write_paused = False  # the client has not read its replies (asyncio's high-water mark)

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.set_write_buffer_limits(high=WRITE_HIGH_BYTES, low=WRITE_LOW_BYTES)  # type: ignore[attr-defined]
        self._heard = self.replica.loop.time()
        self._watch_idle()
        self._flush()
        if self.session is None and not self.frames.ready:
            self._greeting = asyncio.get_running_loop().call_later(GREETING_WAIT_S, self._greet_openpi)
        self._pump()  # frames that reached the front loop before the hand-off

    def data_received(self, data: bytes) -> None:
        self._heard = self.replica.loop.time()
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            self.frames.feed(event)
        self._flush()
        self._pump()

    def pause_writing(self) -> None:
        self._write_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        self._heard = self.replica.loop.time()
        self._pump()

    def _update_reading(self) -> None:
        """Read the socket only while this client's frames and replies are within their bounds."""
        if self.transport is None or self._closed:
            return
        waiting = self.frames.ready
        wanted = not self._write_paused and (
            not waiting
            or len(waiting) < MAX_WAITING_FRAMES
            and self.frames.waiting_bytes() < self.server.max_message_bytes
        )
        if wanted != self._reading:
            self._reading = wanted
            if wanted:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()

    def eof_received(self) -> bool | None:
        self.protocol.receive_eof()
        self._flush()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._greeting is not None:
            self._greeting.cancel()
        if self._idle is not None:
            self._idle.cancel()
        self.frames.ready.clear()
        self.replica.closed(self)

    # the sessions' side
    def send(self, data: bytes | str) -> None:
        """Send one message, if the connection is still open."""
        if self._closed or self.transport is None or self.protocol.state is not State.OPEN:
            return
        if isinstance(data, str):
            self.protocol.send_text(data.encode())
        else:
            self.protocol.send_binary(data)
        self._flush()

    def request(
        self,
        obs: Any,
        seed: int | None,
        instruction: str | None,
        reply: Callable[[Outcome], None],
        params: dict[str, Any] | None = None,
        key: str | None = None,
        space: Any = None,
        prepare: Callable[[Any], Any] | None = None,
        slot: int = 0,
    ) -> Request:
        """An act for this replica's batcher (the server's default parameters unless given):
        `reply(outcome)` is called once it ran; `prepare` runs on the observation first (to decode
        compressed images). A reply that raises is answered with an error frame instead."""
        params = params or self.server.host.defaults
        key = key or self.server.default_key

        def answer(outcome: Outcome) -> None:
            try:
                reply(outcome)
            except Exception as error:  # MemoryError packing a reply, a bug: an error frame, never silence
                log.error("an answer could not be sent:\n%s", traceback.format_exc())
                self._fail(error)
                self._busy = False
                self._pump()

        source = id(self)
        return Request(obs, seed, instruction, params, key, space, answer, prepare, source=source, slot=slot)

    def submit(self, *requests: Request) -> None:
        """Queue requests on this replica, together (the acts of one message batch together)."""
        self.replica.batcher.submit(*requests)

    # internals
    def _flush(self) -> None:
        if self.transport is None:
            return
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)
            else:  # the protocol is done with the connection
                self.transport.close()

    def _pump(self) -> None:
        """Hand the next frame to the session, once the one before it has been answered and the
        client has read enough of its replies."""
        while self.frames.ready and not self._busy and not self._closed and not self._write_paused:
            frame = self.frames.ready.popleft()
            try:
                if self.session is None:
                    self.session, frame = self._detect(frame)
                    if frame is None:
                        continue
                self._busy = True
                self.session.handle(frame, self._done)
            except Exception as error:  # never drop a client without a word
                log.error("a frame could not be handled:\n%s", traceback.format_exc())
                self._fail(error)
                self._busy = False
        self._update_reading()

    def _done(self) -> None:
        self._busy = False
        self._heard = self.replica.loop.time()
        self._pump()

    def _greet_openpi(self) -> None:
        """No frame came: an openpi client, waiting for the policy's metadata."""
        self._greeting = None
        if self.session is None and not self._closed:
            self.send(openpi.pack(self.server.metadata))

    def _fail(self, error: Exception) -> None:
        """Answer a frame the session could not handle (or answer) with an error frame in its
        protocol, for that frame."""
        text = f"the server could not handle the frame ({type(error).__name__}: {str(error)[:200]})"
        try:
            if self.session is not None:
                self.session.fail(text)
            else:
                self.send(f"seq: {text}")
        except Exception:  # even the error frame could not be built: the client is told by a close
            log.error("an error frame could not be sent:\n%s", traceback.format_exc())
            self._close(1011, "the server could not answer a frame")

    def _watch_idle(self) -> None:
        """Close the connection once it has been idle for the server's `idle_timeout_s`: nothing
        received and nothing of it pending (a client waiting for an answer is not idle)."""
        now, timeout = self.replica.loop.time(), self.server.idle_timeout_s
        if self._closed or timeout is None:
            return
        if self._write_paused:  # the client has not read its replies: no frame of it counts
            if now - self._heard >= timeout:
                log.warning("a client that read no reply for %g s was dropped", timeout)
                assert self.transport is not None
                self.transport.abort()
                return
        elif self._busy or self.frames.ready:
            self._heard = now
        elif now - self._heard >= timeout:
            self._close(1001, f"idle for {timeout:g} s")
            return
        self._idle = self.replica.loop.call_at(self._heard + timeout, self._watch_idle)

    def _detect(self, frame: bytes | str) -> tuple[Any, Any]:
        """A peer's session from its first frame; returns the frame to handle."""
        if self._greeting is not None:
            self._greeting.cancel()
            self._greeting = None
        try:
            message = vlaeval.unpack_message(frame)
        except CodecError:
            self.server.count_protocol("openpi")
            return OpenPiSession(self), frame
        self.server.count_protocol("vla-eval")
        return VlaEvalSession(self), message

    def shutdown(self) -> None:
        """The server is stopping: close with 1001 (going away)."""
        self._close(1001, "the policy server is stopping")

    def _close(self, code: int, reason: str) -> None:
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self._flush()
        if self.transport is not None:
            self.transport.close()
