"""`VlaEvalPolicy`: `seq` evaluates a vla-eval model server (`PredictModelServer` and the like).

It speaks as vla-eval's own client does (`vla_eval.runners.sync_runner`): a `hello`, then per
episode an `episode_start` whose `task` holds the condition's `name`, `suite`, `task_id` (the
task's position in its suite), `episode_idx` (the seed: how `seq` numbers a task's episodes),
`seed` and `task_description` (the instruction), with
`mode: "sync"`; one `observation` per act (the observation as the payload: a dict, or
`{"state": obs}`, with the instruction as `task_description`), answered by an `action` whose
`actions` (or `action`) is one action or a whole chunk; and an `episode_end` with the episode's
`metrics` (`success` a bool, as vla-eval's benchmarks give it), `steps` and `elapsed_sec`. No
`recording` block is sent: the server's own recorder would open a vla-eval SQLite file that a
`seq` eval does not write.

Replies are matched to requests by `seq`: a server that refuses an `episode_start` answers it
with an `error` (and no other reply), and that error fails its own episode instead of being read
as the answer to a later observation. Images go raw unless `image_encoding` is `png` (vla-eval's
default) or `jpeg`. The protocol carries no act seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seq._version import __version__
from seq.authoring.begin import EpisodeStart
from seq.errors import SeqInputError
from seq.record.states import IMAGE_ENCODINGS, EpisodeStatus, ImageEncoding, PolicyProtocol
from seq.serving.codec import CodecError
from seq.serving.inline import as_chunk
from seq.serving.remote_errors import RemotePolicyError, ServerLost
from seq.serving.transport import BaseClient, ConnectionLost, SyncSocket
from seq.serving.vlaeval import PROTOCOL_VERSION, pack_message, unpack_message

HARNESS = f"seq-{__version__}"


class VlaEvalPolicy(BaseClient):
    """A `PolicyHandle` for a vla-eval model server."""

    def __init__(
        self, url: str, *, image_encoding: str = "raw", jpeg_quality: int = 95, **options: Any
    ) -> None:
        if image_encoding not in IMAGE_ENCODINGS[PolicyProtocol.VLA_EVAL]:
            raise SeqInputError(f"image_encoding must be raw, png or jpeg, got {image_encoding!r}.")
        super().__init__(url, **options)
        self.jpeg_quality = jpeg_quality if image_encoding == ImageEncoding.JPEG else None
        self.png = image_encoding == ImageEncoding.PNG
        self._seq = 0
        self._in_episode = False
        self._start_seq: int | None = None  # the episode_start whose error may still come
        self._start_error: str | None = None

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def _handshake(self, sock: SyncSocket) -> dict:
        hello = {
            "harness_version": HARNESS,
            "protocol_version": PROTOCOL_VERSION,
            "benchmark": "seq",
            "capabilities": {"action_chunk": True},  # a whole chunk per observation is welcome
        }
        sock.send(pack_message("hello", hello, self._next()))
        try:
            reply = unpack_message(sock.recv(self.open_timeout_s))
        except CodecError as error:
            raise RemotePolicyError(
                f"the server at {self.url} is not a vla-eval model server: its greeting is not a "
                f"vla-eval hello ({error}).",
                kind="protocol",
            ) from None
        if reply["type"] != "hello":
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} answered hello with {reply['type']!r}.", kind="protocol"
            )
        self._in_episode, self._start_seq, self._start_error = False, None, None
        return reply["payload"] if isinstance(reply["payload"], dict) else {}

    def begin_episode(self, action_space: Any, slot: int = 0, episode: EpisodeStart | None = None) -> None:
        self.connect()
        if self._in_episode:  # the last episode's end was not sent (its act raised)
            self._send(pack_message("episode_end", {}, self._next()), "an episode's end")
        task: dict[str, Any] = {}
        if episode is not None:
            described = {"name": episode.task, "suite": episode.suite, "task_id": episode.task_index}
            described.update(episode_idx=episode.seed, seed=episode.seed)
            described["task_description"] = episode.instruction
            task = {key: value for key, value in described.items() if value is not None}
        self._start_seq, self._start_error = self._next(), None
        start = pack_message("episode_start", {"task": task, "mode": "sync"}, self._start_seq)
        self._send(start, "an episode's start")
        self._in_episode = True

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        payload = dict(obs) if isinstance(obs, dict) else {"state": obs}
        if instruction is not None:
            payload.setdefault("task_description", instruction)
        number = self._next()
        frame = pack_message("observation", payload, number, self.jpeg_quality, self.png)
        reply = self._answer(number, self._exchange(frame, "an act"))
        if self._start_error is not None:
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} refused the episode's start: {self._start_error}"
            )
        if reply["type"] == "error":
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} answered with an error: {_detail(reply)}"
            )
        if reply["type"] != "action" or not isinstance(reply["payload"], dict):
            self._drop()
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} answered observation #{number} with {reply['type']}.",
                kind="protocol",
            )
        payload = reply["payload"]
        actions = payload.get("actions", payload.get("action"))
        if actions is None:
            raise RemotePolicyError(
                f"the vla-eval server at {self.url} answered an action without 'actions' "
                f"(keys: {sorted(map(str, payload))})."
            )
        return np.array(as_chunk(actions))

    def _answer(self, number: int, frame: bytes | str) -> dict[str, Any]:
        """The reply to request `number`. Replies to earlier frames are skipped; an error answering
        this episode's start is kept for `act` to raise."""
        while True:
            reply = unpack_message(frame)
            if reply["seq"] == number:
                return reply
            if reply["seq"] > number:
                self._drop()
                raise RemotePolicyError(
                    f"the vla-eval server at {self.url} answered #{reply['seq']} before #{number}.",
                    kind="protocol",
                )
            if reply["type"] == "error" and reply["seq"] == self._start_seq:
                self._start_error = _detail(reply)
            frame = self._receive("an act")

    def _receive(self, what: str) -> bytes | str:
        assert self._sock is not None
        try:
            return self._sock.recv(self.timeout_s)
        except (TimeoutError, ConnectionLost, OSError) as error:
            self._drop()
            raise ServerLost(
                f"the policy server at {self.url} did not answer {what} ({type(error).__name__}).", self.url
            ) from None

    def end_episode(self, result: Any, slot: int = 0) -> None:
        """Tell the server how the episode ended (`metrics`, `steps`, `elapsed_sec`); never raises:
        a server gone now is found again at the next episode's start."""
        if not self._in_episode or self._sock is None:
            return
        metrics = {k: v for k, v in result.metrics.items() if k not in ("steps", "duration_s")}
        if metrics.get("success") in (0, 1):  # vla-eval's benchmarks say success as a bool
            metrics["success"] = bool(metrics["success"])
        ending: dict[str, Any] = {
            "metrics": metrics,
            "steps": result.steps,
            "elapsed_sec": round(result.duration_s, 3),
        }
        if result.status == EpisodeStatus.ERROR:
            ending["failure_reason"] = result.ended_by or "error"
        self._in_episode = False
        try:
            self._sock.send(pack_message("episode_end", ending, self._next()))
        except Exception:
            self._drop()

    def close(self) -> None:
        if self._in_episode and self._sock is not None:
            try:
                self._sock.send(pack_message("episode_end", {}, self._next()))
            except Exception:
                pass
        self._in_episode = False
        super().close()


def _detail(reply: dict[str, Any]) -> Any:
    payload = reply["payload"]
    return payload.get("error", payload) if isinstance(payload, dict) else payload
