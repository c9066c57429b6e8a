"""`VlaEvalSession`: `vla-eval run` (or any vla-eval client) uses a `seq` server as its model server.

As vla-eval's own servers (`vla_eval.model_servers.serve`) do: the client's `hello` is answered
with a `hello` carrying its `seq`, the `harness_version`, `model_server`, `capabilities` and the
policy's `action_spec` / `observation_spec` (its declared `conventions`), which vla-eval's client
checks against its benchmark; every reply carries the `seq` of the frame it answers.

Each `episode_start` calls the policy's `@seq.begin` with the task's `name`, `suite`,
`task_description` and seed (the task's `seed`, else its `episode_idx`); a `@seq.begin` that
raises is answered with an `error` (`episode_start_failed: …`), as vla-eval's servers answer a
failing `on_episode_start`. Each `observation` payload goes to infer as `obs` (instruction: its
`task_description`, else the task's); act seeds are hashed from the episode's seed as in `seq`.
A chunk is answered one action per observation, as a vla-eval `PredictModelServer` with
`chunk_size` does, or whole to a client whose hello says `capabilities: {action_chunk: true}`
(`seq`'s own vla-eval client does).

Errors are as short as vla-eval's (`observation_failed: ValueError: …`); the traceback goes to the
server's log. Every error carries the `seq` of the frame it answers, read from the frame even
when the frame is refused (seq 0 only when it cannot be read at all).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from seq._version import __version__
from seq.authoring.begin import EpisodeStart
from seq.authoring.seeding import act_seed
from seq.serving.backpressure import reply_problem
from seq.serving.codec import CodecError
from seq.serving.session import last_line
from seq.serving.vlaeval import PROTOCOL_VERSION, decode_images, frame_seq, pack_message, unpack_message

if TYPE_CHECKING:
    from seq.serving.host import Outcome
    from seq.serving.link import ClientLink

log = logging.getLogger("seq.serving")


def hello_payload(metadata: dict[str, Any], conventions: dict[str, Any]) -> dict[str, Any]:
    """The server's hello, as vla-eval's servers build it (`make_hello_payload`), with `seq`'s
    metadata beside it (policy, version, parameters, capabilities)."""
    payload = {**metadata, "harness_version": f"seq-{__version__}", "protocol_version": PROTOCOL_VERSION}
    for side in ("action", "observation"):
        if conventions.get(side):
            payload[f"{side}_spec"] = conventions[side]
    return payload


def _episode_seed(task: dict[str, Any]) -> int:
    for key in ("seed", "episode_idx", "episode_id"):
        try:
            return int(task[key])
        except (KeyError, TypeError, ValueError):
            continue
    return 0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def episode_of(task: dict[str, Any]) -> EpisodeStart:
    """What `@seq.begin` is told of a vla-eval task."""
    return EpisodeStart(
        task=_text(task.get("name")),
        suite=_text(task.get("suite")),
        instruction=_text(task.get("task_description")) or _text(task.get("instruction")),
        seed=_episode_seed(task),
    )


class VlaEvalSession:
    """One vla-eval client's connection to a `seq` server."""

    def __init__(self, connection: ClientLink) -> None:
        self.connection, self.server, self.send = connection, connection.server, connection.send
        self.task: dict[str, Any] = {}
        self.chunk: np.ndarray | None = None
        self.position = self.queries = self.episode_seed = 0
        self.whole_chunks = False  # the client takes a chunk per observation
        self.current = 0  # the seq of the frame being answered

    def _error(self, text: str, number: int) -> None:
        self.send(pack_message("error", {"error": text}, number))

    def fail(self, text: str) -> None:
        """Answer the frame being handled with a server error (the connection could not)."""
        self._error(f"server_error: {text}", self.current)

    def handle(self, frame: bytes | str | dict[str, Any], done: Callable[[], None]) -> None:
        """Answer one frame (or an already decoded message); `done()` once answered."""
        deferred: list = []
        if isinstance(frame, dict):
            message = frame
        else:
            try:
                message = unpack_message(frame, deferred)
            except CodecError as error:
                self._error(f"bad_request: {error}", frame_seq(frame))
                done()
                return
        kind, payload, number = message["type"], message["payload"], message["seq"]
        self.current = number
        if kind == "observation":
            self._observation(payload, number, done, decode_images if deferred else None)
            return
        if kind == "hello":
            self._hello(payload, number)
        elif kind == "episode_start":
            self._episode_start(payload, number)
        elif kind == "episode_end":
            self.chunk = None
        elif kind == "action":
            self._error("bad_request: a client does not send actions.", number)
        done()

    def _hello(self, payload: Any, number: int) -> None:
        capabilities = payload.get("capabilities") if isinstance(payload, dict) else None
        self.whole_chunks = isinstance(capabilities, dict) and capabilities.get("action_chunk") is True
        host = self.server.host
        self.send(pack_message("hello", hello_payload(self.server.metadata, host.spec.conventions), number))

    def _episode_start(self, payload: Any, number: int) -> None:
        task = payload.get("task") if isinstance(payload, dict) else None
        self.task = task if isinstance(task, dict) else {}
        self.chunk, self.position, self.queries = None, 0, 0
        self.episode_seed = _episode_seed(self.task)
        robot = (id(self.connection), 0)
        ok, trace = self.server.host.begin(self.connection.replica.index, episode_of(self.task), robot)
        if not ok:
            log.error("episode_start failed (seq %s):\n%s", number, trace)
            self._error(f"episode_start_failed: {last_line(trace)}", number)

    def _send_actions(self, number: int) -> None:
        assert self.chunk is not None
        if self.whole_chunks:
            actions, self.position = self.chunk, len(self.chunk)
        else:
            actions = self.chunk[self.position]
            self.position += 1
        try:
            frame = pack_message("action", {"actions": np.asarray(actions, dtype=np.float32)}, number)
        except (CodecError, MemoryError, ValueError, OverflowError) as error:
            self.chunk = None
            self._error(f"server_error: the reply could not be packed ({type(error).__name__}).", number)
            return
        self.send(frame)

    def _observation(
        self, obs: Any, number: int, done: Callable[[], None], prepare: Callable[[Any], Any] | None
    ) -> None:
        if self.chunk is not None and self.position < len(self.chunk):
            self._send_actions(number)
            done()
            return
        described = obs.get("task_description") if isinstance(obs, dict) else None
        instruction = described if isinstance(described, str) else self.task.get("name")
        seed = act_seed(self.episode_seed, 0, self.queries)
        self.queries += 1

        def answer(outcome: Outcome) -> None:
            ok, value = outcome
            if ok and value.dtype.kind == "c":
                ok, value = False, f"TypeError: actions of dtype {value.dtype} cannot travel to vla-eval."
            # sent as float32: 4 bytes a value
            problem = reply_problem(value.size * 4, self.server.max_reply_bytes) if ok else None
            if problem is not None:
                self._error(f"server_error: {problem}", number)
            elif ok:
                self.chunk, self.position = value, 0
                self._send_actions(number)
            else:
                log.error("an observation failed (seq %s):\n%s", number, value)
                self._error(f"observation_failed: {last_line(value)}", number)
            done()

        instruction = instruction if isinstance(instruction, str) else None
        self.connection.submit(self.connection.request(obs, seed, instruction, answer, prepare=prepare))
