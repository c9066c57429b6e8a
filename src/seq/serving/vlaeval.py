"""The vla-evaluation-harness protocol v1 (`vla-eval` 0.8.0), both ways.

Frames are msgpack maps `{type, payload, seq, timestamp}`; types `hello` (both ways), `episode_start`,
`observation`, `action` (`{"actions": float32 array}`), `episode_end` and `error`. Arrays travel as
`{"__ndarray__": True, "data", "dtype", "shape"}`, uint8 HWC images optionally as
`{"__image__": True, "format": "raw" | "png" | "jpeg", ...}` (PNG is vla-eval's default).

- `VlaEvalPolicy` lets `seq` evaluate a vla-eval model server (`PredictModelServer`): the
  observation goes as the payload (a dict, or `{"state": obs}`), with the instruction as
  `task_description`; images go raw unless `image_encoding="jpeg"`. The protocol carries no seed.
- `VlaEvalSession` lets `vla-eval run` use a `seq` server as its model server: each observation
  payload goes to infer as `obs` (instruction: its `task_description`, else the task's `name`);
  a chunk is answered one action per observation, as a vla-eval `PredictModelServer` with
  `chunk_size` does; act seeds are hashed from the task's `seed` (else `episode_idx`) as in `seq`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack
import numpy as np

from seq._version import __version__
from seq.engine.seeding import act_seed
from seq.serving.codec import (
    CodecError,
    checked_dtype,
    is_image,
    jpeg_array,
    jpeg_bytes,
    received_array,
    unpack_limited,
)
from seq.serving.errors import RemotePolicyError
from seq.serving.images import PixelBudget, check_image
from seq.serving.inline import as_chunk
from seq.serving.session import last_line
from seq.serving.transport import BaseClient, SyncSocket

if TYPE_CHECKING:
    from seq.serving.connection import Connection
    from seq.serving.host import Outcome

TYPES = frozenset({"hello", "observation", "action", "episode_start", "episode_end", "error"})
PROTOCOL_VERSION = 1


def _encoder(jpeg_quality: int | None) -> Any:
    def default(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            if jpeg_quality is not None and is_image(value) and value.shape[2] == 3:
                data = jpeg_bytes(value, jpeg_quality)
                return {"__image__": True, "format": "jpeg", "data": data, "shape": list(value.shape)}
            checked_dtype(value.dtype.str)
            return {
                "__ndarray__": True,
                "data": np.ascontiguousarray(value).tobytes(),
                "dtype": value.dtype.str,
                "shape": list(value.shape),
            }
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
        raise CodecError(f"cannot send a value of type {type(value).__name__} in the vla-eval protocol.")

    return default


class Compressed:
    """A PNG or JPEG image not decoded yet: the server decodes it in a replica's thread."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def decode_images(value: Any) -> Any:
    """`value` with every `Compressed` image decoded to a uint8 array."""
    if isinstance(value, Compressed):
        return jpeg_array(value.data)  # PIL reads PNG as well as JPEG
    if isinstance(value, dict):
        return {key: decode_images(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_images(item) for item in value]
    return value


def _hook(obj: dict, deferred: list | None, budget: PixelBudget) -> Any:
    if "__image__" in obj:
        if obj.get("format") == "raw":
            return received_array(obj["data"], checked_dtype(obj["dtype"]), obj["shape"])
        if obj.get("format") not in ("png", "jpeg"):
            raise CodecError(f"unknown image format {obj.get('format')!r}.")
        if deferred is None:
            return jpeg_array(obj["data"], budget=budget)
        check_image(obj["data"], budget)  # the frame's pixel budget, from the header, before decoding
        deferred.append(True)
        return Compressed(obj["data"])
    if "__ndarray__" in obj:
        return received_array(obj["data"], checked_dtype(obj["dtype"]), obj["shape"])
    return obj


def pack_message(kind: str, payload: Any, seq: int = 0, jpeg_quality: int | None = None) -> bytes:
    """One vla-eval frame."""
    raw = {"type": kind, "payload": payload, "seq": seq, "timestamp": time.time()}
    try:
        return msgpack.packb(raw, default=_encoder(jpeg_quality), use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as error:
        raise CodecError(str(error)) from None


def unpack_message(frame: bytes | str, deferred: list | None = None) -> dict[str, Any]:
    """A vla-eval frame as a dict, checked for its four fields and a known type. Given a list
    `deferred`, PNG and JPEG images stay `Compressed` (one entry is appended for each)."""
    if isinstance(frame, str):
        raise CodecError("expected a binary msgpack frame, got text.")
    budget = PixelBudget()
    raw = unpack_limited(frame, object_hook=lambda obj: _hook(obj, deferred, budget))
    if not looks_like_message(raw):
        raise CodecError("a vla-eval frame is a map with type, payload, seq and timestamp.")
    return raw


def looks_like_message(raw: Any) -> bool:
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("type"), str)
        and raw["type"] in TYPES
        and {"payload", "seq", "timestamp"} <= raw.keys()
        and isinstance(raw.get("seq"), int)
    )


class VlaEvalPolicy(BaseClient):
    """A `PolicyHandle` for a vla-eval model server."""

    def __init__(
        self, url: str, *, image_encoding: str = "raw", jpeg_quality: int = 95, **options: Any
    ) -> None:
        super().__init__(url, **options)
        self.jpeg_quality = jpeg_quality if image_encoding == "jpeg" else None
        self._seq = 0
        self._in_episode = False

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def _handshake(self, sock: SyncSocket) -> dict:
        hello = {
            "harness_version": f"seq-{__version__}",
            "protocol_version": PROTOCOL_VERSION,
            "benchmark": "seq",
        }
        sock.send(pack_message("hello", hello, self._next()))
        reply = unpack_message(sock.recv(self.open_timeout_s))
        if reply["type"] != "hello":
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} answered hello with {reply['type']!r}."
            )
        self._in_episode = False
        return reply["payload"] if isinstance(reply["payload"], dict) else {}

    def begin_episode(self, action_space: Any, slot: int = 0) -> None:
        self.connect()
        if self._in_episode:
            self._send(pack_message("episode_end", {}, self._next()), "an episode's end")
        self._send(pack_message("episode_start", {"task": {}}, self._next()), "an episode's start")
        self._in_episode = True

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        payload = dict(obs) if isinstance(obs, dict) else {"state": obs}
        if instruction is not None:
            payload.setdefault("task_description", instruction)
        number = self._next()
        reply = unpack_message(
            self._exchange(pack_message("observation", payload, number, self.jpeg_quality), "an act")
        )
        if reply["type"] == "error":
            detail = reply["payload"].get("error") if isinstance(reply["payload"], dict) else reply["payload"]
            raise RemotePolicyError(f"the vla-eval server at {self.url} answered with an error: {detail}")
        if reply["type"] != "action" or reply["seq"] != number:
            self._drop()
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} answered {reply['type']} #{reply['seq']}, "
                f"expected the action for observation #{number}.",
                kind="protocol",
            )
        return np.array(as_chunk(reply["payload"]))

    def close(self) -> None:
        if self._in_episode and self._sock is not None:
            try:
                self._sock.send(pack_message("episode_end", {}, self._next()))
            except Exception:
                pass
        self._in_episode = False
        super().close()


def _episode_seed(task: dict[str, Any]) -> int:
    for key in ("seed", "episode_idx", "episode_id"):
        try:
            return int(task[key])
        except (KeyError, TypeError, ValueError):
            continue
    return 0


class VlaEvalSession:
    """One vla-eval client's connection to a `seq` server."""

    def __init__(self, connection: Connection) -> None:
        self.connection, self.server, self.send = connection, connection.server, connection.send
        self.task: dict[str, Any] = {}
        self.chunk: np.ndarray | None = None
        self.position = self.queries = self.episode_seed = 0

    def handle(self, frame: bytes | str | dict[str, Any], done: Callable[[], None]) -> None:
        """Answer one frame (or an already decoded message); `done()` once answered."""
        deferred: list = []
        if isinstance(frame, dict):
            message = frame
        else:
            try:
                message = unpack_message(frame, deferred)
            except CodecError as error:
                self.send(pack_message("error", {"error": f"bad_request: {error}"}, 0))
                done()
                return
        kind, payload, number = message["type"], message["payload"], message["seq"]
        if kind == "observation":
            self._observation(payload, number, done, decode_images if deferred else None)
            return
        if kind == "hello":
            self.send(pack_message("hello", self.server.metadata, number))
        elif kind == "episode_start":
            task = payload.get("task") if isinstance(payload, dict) else None
            self.task = task if isinstance(task, dict) else {}
            self.chunk, self.position, self.queries = None, 0, 0
            self.episode_seed = _episode_seed(self.task)
        elif kind == "episode_end":
            self.chunk = None
        elif kind == "action":
            self.send(
                pack_message("error", {"error": "bad_request: a client does not send actions."}, number)
            )
        done()

    def _send_action(self, number: int) -> None:
        assert self.chunk is not None
        action = np.asarray(self.chunk[self.position], dtype=np.float32)
        self.position += 1
        self.send(pack_message("action", {"actions": action}, number))

    def _observation(
        self, obs: Any, number: int, done: Callable[[], None], prepare: Callable[[Any], Any] | None
    ) -> None:
        if self.chunk is not None and self.position < len(self.chunk):
            self._send_action(number)
            done()
            return
        described = obs.get("task_description") if isinstance(obs, dict) else None
        instruction = described if isinstance(described, str) else self.task.get("name")
        seed = act_seed(self.episode_seed, 0, self.queries)
        self.queries += 1

        def answer(outcome: Outcome) -> None:
            ok, value = outcome
            if ok:
                self.chunk, self.position = value, 0
                self._send_action(number)
            else:
                error = f"observation_failed: {last_line(value)}\n{value}"
                self.send(pack_message("error", {"error": error}, number))
            done()

        instruction = instruction if isinstance(instruction, str) else None
        self.connection.submit(self.connection.request(obs, seed, instruction, answer, prepare=prepare))
