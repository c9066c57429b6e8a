"""The `seq` protocol, server side: one connection of a `RemotePolicy`.

Frames are `seq` codec maps with a `type` and an `id`; each gets exactly one answer with that id:

- `{"type": "episode_start", "action_space": description | None, "params": {...} | None}` sets
  the episode's action space and parameter values → `{"type": "ready"}`;
- `{"type": "act", "obs": ..., "seed": int | None, "instruction": str | None}` →
  `{"type": "action", "actions": chunk [H, D]}`;
- anything malformed → `{"type": "error", "kind": "bad_request", "error": ...}`, and a policy that
  raised → `{"type": "error", "kind": "policy", "error": its last line, "traceback": ...}`. The
  connection stays usable after either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seq.errors import SeqInputError
from seq.serving import codec
from seq.serving.host import Outcome, params_key

if TYPE_CHECKING:
    from seq.serving.connection import Connection


def last_line(trace: str) -> str:
    """The `Error: message` line of a traceback."""
    lines = trace.strip().splitlines()
    return lines[-1] if lines else "the policy failed"


class SeqSession:
    """One `seq` client's connection."""

    def __init__(self, connection: Connection) -> None:
        self.connection, self.server, self.send = connection, connection.server, connection.send
        self.params, self.key, self.space = self.server.host.defaults, self.server.default_key, None

    def _reply(self, message: dict[str, Any]) -> None:
        try:
            frame = codec.pack(message)
        except codec.CodecError as error:
            frame = codec.pack(
                {"type": "error", "id": message.get("id"), "kind": "policy", "error": str(error)}
            )
        self.send(frame)

    def _error(self, rid: Any, kind: str, error: str, trace: str | None = None) -> None:
        self._reply({"type": "error", "id": rid, "kind": kind, "error": error, "traceback": trace})

    def handle(self, frame: bytes | str, done: Callable[[], None]) -> None:
        """Answer one frame; `done()` once answered (later, for an act)."""
        message = self._parse(frame)
        if message is None:
            done()
            return
        rid, kind = message.get("id"), message["type"]
        if kind == "act":
            self._act(rid, message, done)
            return
        if kind == "episode_start":
            try:
                self.params = self.server.host.coerce(message.get("params"), "episode_start")
                self.key = params_key(self.params)
                self.space = self.server.spaces.get(message.get("action_space"))
                self._reply({"type": "ready", "id": rid})
            except (SeqInputError, ValueError, TypeError, KeyError) as error:
                self._error(rid, "bad_request", f"{type(error).__name__}: {error}")
        else:
            self._error(rid, "bad_request", f"unknown frame type {kind!r}.")
        done()

    def _parse(self, frame: bytes | str) -> dict[str, Any] | None:
        if isinstance(frame, str):
            self._error(None, "bad_request", "expected a binary msgpack frame, got text.")
            return None
        try:
            message = codec.unpack(frame)
        except codec.CodecError as error:
            self._error(None, "bad_request", f"malformed frame: {error}")
            return None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self._error(None, "bad_request", "a frame must be a map with a string 'type'.")
            return None
        return message

    def _act(self, rid: Any, message: dict[str, Any], done: Callable[[], None]) -> None:
        seed, instruction = message.get("seed"), message.get("instruction")
        problem = None
        if "obs" not in message:
            problem = "an act needs 'obs'."
        elif not (seed is None or (isinstance(seed, int) and not isinstance(seed, bool))):
            problem = f"an act's seed must be an integer, got {seed!r}."
        elif not (instruction is None or isinstance(instruction, str)):
            problem = "an act's instruction must be a string or null."
        if problem is not None:
            self._error(rid, "bad_request", problem)
            done()
            return

        def answer(outcome: Outcome) -> None:
            ok, value = outcome
            if ok:
                self._reply({"type": "action", "id": rid, "actions": value})
            else:
                self._error(rid, "policy", last_line(value), value)
            done()

        self.connection.act(message["obs"], seed, instruction, answer, self.params, self.key, self.space)
