"""The openpi policy protocol (`openpi-client`), both ways.

On connect the server sends one msgpack frame of metadata; then, in lockstep, the client sends an
observation dict and gets an action dict whose `actions` is a chunk `[H, D]`. Arrays travel as
`{b"__ndarray__": True, b"data", b"dtype", b"shape"}`, numpy scalars as `{b"__npgeneric__": ...}`.
A server error is a text frame holding the traceback. Complex arrays are refused both ways, as
openpi's own codec refuses them.

- `OpenPiPolicy` lets `seq` evaluate any openpi-protocol server (the instruction goes as `prompt`;
  openpi carries no seed, so the server's own randomness decides).
- `OpenPiSession` lets an openpi client use a `seq` server: it is sent the policy's metadata on
  connecting (`get_server_metadata()` returns it); each observation dict goes to the policy's
  infer as `obs`, with `instruction=obs["prompt"]` and `seed=None`; the reply is
  `{"actions": chunk, "server_timing": {"infer_ms": ...}}`. Errors are text frames, as openpi's own
  server sends them, but the connection stays open. The protocol has no episodes, so a policy's
  `@seq.begin` is not called.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack
import numpy as np

from seq.serving.backpressure import reply_problem
from seq.serving.codec import CodecError, checked_dtype, received_array, unpack_limited
from seq.serving.inline import as_chunk
from seq.serving.remote_errors import RemotePolicyError
from seq.serving.transport import BaseClient, SyncSocket

if TYPE_CHECKING:
    from seq.serving.host import Outcome
    from seq.serving.link import ClientLink


def _default(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic) and value.dtype.kind in ("V", "O", "c"):
        raise CodecError(f"dtype {value.dtype} cannot travel in the openpi protocol.")
    if isinstance(value, np.ndarray):
        return {
            b"__ndarray__": True,
            b"data": np.ascontiguousarray(value).tobytes(),
            b"dtype": value.dtype.str,
            b"shape": list(value.shape),
        }
    if isinstance(value, np.generic):
        return {b"__npgeneric__": True, b"data": value.item(), b"dtype": value.dtype.str}
    raise CodecError(f"cannot send a value of type {type(value).__name__} in the openpi protocol.")


def _dtype(text: Any) -> np.dtype:
    """A dtype openpi carries: `checked_dtype`'s, less complex (openpi's packer refuses it)."""
    dtype = checked_dtype(text)
    if dtype.kind == "c":
        raise CodecError(f"dtype {dtype} is refused: the openpi protocol carries no complex arrays.")
    return dtype


def _hook(obj: dict) -> Any:
    if b"__ndarray__" in obj:
        return received_array(obj[b"data"], _dtype(obj[b"dtype"]), obj[b"shape"])
    if b"__npgeneric__" in obj:
        return _dtype(obj[b"dtype"]).type(obj[b"data"])
    return obj


def pack(value: Any) -> bytes:
    """One openpi frame (`openpi_client.msgpack_numpy.packb`'s format)."""
    try:
        return msgpack.packb(value, default=_default, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as error:
        raise CodecError(str(error)) from None


def unpack(frame: bytes) -> Any:
    """The value in an openpi frame; its arrays are the receiver's own, writable."""
    return unpack_limited(frame, object_hook=_hook)


class OpenPiPolicy(BaseClient):
    """A `PolicyHandle` for an openpi-protocol server (`seq` can evaluate it like any policy)."""

    def _handshake(self, sock: SyncSocket) -> dict:
        frame = sock.recv(self.open_timeout_s)
        if isinstance(frame, str):
            raise RemotePolicyError(f"the openpi server at {self.url} sent text instead of metadata: {frame}")
        metadata = unpack(frame)
        return metadata if isinstance(metadata, dict) else {"metadata": metadata}

    def begin_episode(self, action_space: Any, slot: int = 0, episode: Any = None) -> None:
        self.connect()  # the protocol has no episodes: nothing is sent

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        request = dict(obs) if isinstance(obs, dict) else {"state": obs}
        if instruction is not None:
            request.setdefault("prompt", instruction)
        reply = self._exchange(pack(request), "an act")
        if isinstance(reply, str):
            raise RemotePolicyError(
                f"the openpi server at {self.url} raised:\n{reply}", remote_traceback=reply
            )
        answer = unpack(reply)
        if not isinstance(answer, dict):
            raise RemotePolicyError(
                f"the openpi server at {self.url} answered {type(answer).__name__}, not a dict."
            )
        return np.array(as_chunk(answer))


class OpenPiSession:
    """One openpi client's connection to a `seq` server."""

    def __init__(self, connection: ClientLink) -> None:
        self.connection, self.send = connection, connection.send

    def fail(self, text: str) -> None:
        """Answer the observation being handled with an error (a text frame, as openpi's)."""
        self.send(f"seq: {text}")

    def handle(self, frame: bytes | str, done: Callable[[], None]) -> None:
        """Answer one observation; `done()` once answered."""
        obs: Any = None
        if isinstance(frame, str):
            self.send("seq: expected a binary msgpack observation frame, got text.")
        else:
            try:
                obs = unpack(frame)
            except CodecError as error:
                self.send(f"seq: malformed frame: {error}")
            else:
                if not isinstance(obs, dict):
                    self.send(f"seq: an observation must be a dict, got {type(obs).__name__}.")
        if not isinstance(obs, dict):
            done()
            return
        prompt = obs.get("prompt")
        start = time.perf_counter()

        def answer(outcome: Outcome) -> None:
            ok, value = outcome
            if not ok:
                self.send(value)  # the traceback, as openpi's own server sends it
            elif (problem := reply_problem(value.nbytes, self.connection.server.max_reply_bytes)) is not None:
                self.send(f"seq: {problem}")
            else:
                timing = {"infer_ms": (time.perf_counter() - start) * 1000}
                try:
                    self.send(pack({"actions": value, "server_timing": timing}))
                except (CodecError, MemoryError, ValueError, OverflowError) as error:
                    self.send(f"seq: the policy's actions cannot be sent ({type(error).__name__}: {error})")
            done()

        instruction = prompt if isinstance(prompt, str) else None
        self.connection.submit(self.connection.request(obs, None, instruction, answer))
