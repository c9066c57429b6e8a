"""The `seq` protocol, server side: one connection of a `RemotePolicy`.

Frames are `seq` codec maps with a `type` and an `id`; each gets exactly one answer with that id:

- `{"type": "episode_start", "action_space": description | None, "params": {...} | None, "task",
  "suite", "instruction", "seed"}` sets the episode's action space and parameter values and
  calls the policy's `@seq.begin` (with task, suite, instruction and seed) → `{"type": "ready"}`;
- `{"type": "act", "obs": ..., "seed": int | None, "instruction": str | None}` →
  `{"type": "action", "actions": chunk [H, D]}`, plus `"plans": [...]` for a composite policy
  (`@seq.plan`) when this act is the first to use a plan (`seq.serving.planning`);
- `{"type": "act_batch", "acts": [{"episode": slot, "obs", "seed", "instruction"}, ...]}` (a worker
  running several episodes side by side; each started with `episode_start` carrying its
  `"episode": slot`) → `{"type": "actions", "results": [{"actions": chunk} | an error map, ...]}`,
  one result per act, in order: the acts go to the batcher together, and one that raised fails
  alone;
- anything malformed → `{"type": "error", "kind": "bad_request", "error": ...}`, and a policy that
  raised → `{"type": "error", "kind": "policy", "error": its last line, "traceback": ...}`. The
  connection stays usable after either.

A request whose reply would be over the server's reply budget (acts × the episode's action
values, `seq.serving.backpressure`) is answered `{"type": "error", "kind": "bad_request"}` naming
the budget before anything is computed; one whose computed actions are over it, or whose reply
cannot be packed (out of memory), gets `{"type": "error", "kind": "server"}`. Every error
carries the `id` of the frame it answers, whenever that frame could be read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seq.authoring.begin import EpisodeStart
from seq.errors import SeqInputError
from seq.serving import codec
from seq.serving.backpressure import budget_problem, reply_problem
from seq.serving.host import Outcome, Request, params_key
from seq.serving.spaces import space_elements

if TYPE_CHECKING:
    from seq.serving.link import ClientLink


def last_line(trace: str) -> str:
    """The `Error: message` line of a traceback."""
    lines = trace.strip().splitlines()
    return lines[-1] if lines else "the policy failed"


class SeqSession:
    """One `seq` client's connection."""

    def __init__(self, connection: ClientLink) -> None:
        self.connection, self.server, self.send = connection, connection.server, connection.send
        # each episode slot's (parameter values, their key, action space), as its episode_start set them
        self.episodes: dict[int, tuple[dict[str, Any], str, Any]] = {}
        self.values: dict[int, int] = {}  # each slot's action values per act (its space's size)
        self.defaults = (self.server.host.defaults, self.server.default_key, None)
        self.current: Any = None  # the id of the frame being answered

    def _reply(self, message: dict[str, Any]) -> None:
        """Send `message`; one that cannot be packed (a type the codec refuses, out of memory)
        is answered with an error frame instead."""
        try:
            frame = codec.pack(message)
        except (codec.CodecError, MemoryError, ValueError, OverflowError) as error:
            kind = "policy" if isinstance(error, codec.CodecError) else "server"
            text = f"the reply could not be packed ({type(error).__name__}: {str(error)[:200]})"
            frame = codec.pack({"type": "error", "id": message.get("id"), "kind": kind, "error": text})
        self.send(frame)

    def fail(self, text: str) -> None:
        """Answer the frame being handled with a server error (the connection could not)."""
        self._error(self.current, "server", text)

    def _error(self, rid: Any, kind: str, error: str, trace: str | None = None) -> None:
        self._reply({"type": "error", "id": rid, "kind": kind, "error": error, "traceback": trace})

    def handle(self, frame: bytes | str, done: Callable[[], None]) -> None:
        """Answer one frame; `done()` once answered (later, for an act)."""
        self.current = None
        message = self._parse(frame)
        if message is None:
            done()
            return
        rid, kind = message.get("id"), message["type"]
        self.current = rid
        if kind == "act":
            self._act(rid, message, done)
            return
        if kind == "act_batch":
            self._act_batch(rid, message, done)
            return
        if kind == "episode_start":
            try:
                slot = _slot(message)
                params = self.server.host.coerce(message.get("params"), "episode_start")
                space = self.server.spaces.get(message.get("action_space"))
                episode = EpisodeStart.from_message(message, "episode_start")
                self.episodes[slot] = (params, params_key(params), space)
                self.values[slot] = space_elements(message.get("action_space"))
            except (SeqInputError, ValueError, TypeError, KeyError, MemoryError) as error:
                self._error(rid, "bad_request", f"{type(error).__name__}: {error}")
            else:
                robot = (id(self.connection), slot)
                ok, trace = self.server.host.begin(self.connection.replica.index, episode, robot)
                if ok:
                    self._reply({"type": "ready", "id": rid})
                else:
                    self._error(rid, "policy", last_line(trace), trace)
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
        problem = _act_problem(message) or self._over_budget([message])
        if problem is not None:
            self._error(rid, "bad_request", problem)
            done()
            return

        asked: list[Request] = []

        def answer(outcome: Outcome) -> None:
            ok, value = outcome
            problem = reply_problem(value.nbytes, self.server.max_reply_bytes) if ok else None
            if problem is not None:
                self._error(rid, "server", problem)
            elif ok:
                self._reply({"type": "action", "id": rid, "actions": value, **_plans(asked[0])})
            else:
                self._error(rid, "policy", last_line(value), value)
            done()

        asked.append(self._request(message, answer))
        self.connection.submit(asked[0])

    def _act_batch(self, rid: Any, message: dict[str, Any], done: Callable[[], None]) -> None:
        acts = message.get("acts")
        if not isinstance(acts, list) or not acts:
            self._error(rid, "bad_request", "an act_batch needs a non-empty list 'acts'.")
            done()
            return
        problem = None
        for act in acts:
            problem = _act_problem(act) if isinstance(act, dict) else "each of an act_batch's acts is a map."
            if problem is not None:
                break
        problem = problem or self._over_budget(acts)
        if problem is not None:
            self._error(rid, "bad_request", problem)
            done()
            return
        results: list[dict[str, Any] | None] = [None] * len(acts)
        waiting = [len(acts)]
        asked: list[Request] = []

        def answer_for(index: int) -> Callable[[Outcome], None]:
            def answer(outcome: Outcome) -> None:
                ok, value = outcome
                results[index] = (
                    {"actions": value, **_plans(asked[index])}
                    if ok
                    else {"kind": "policy", "error": last_line(value), "traceback": value}
                )
                waiting[0] -= 1
                if not waiting[0]:
                    nbytes = sum(r["actions"].nbytes for r in results if r is not None and "actions" in r)
                    problem = reply_problem(nbytes, self.server.max_reply_bytes)
                    if problem is not None:
                        self._error(rid, "server", problem)
                    else:
                        self._reply({"type": "actions", "id": rid, "results": results})
                    done()

            return answer

        asked.extend(self._request(act, answer_for(index)) for index, act in enumerate(acts))
        self.connection.submit(*asked)

    def _over_budget(self, acts: list[dict[str, Any]]) -> str | None:
        """Why these acts' reply would be over the server's budget (each act's episode's action
        space says how many values it answers with), before anything is computed."""
        values = sum(self.values.get(_slot(act), 0) for act in acts)
        return budget_problem(len(acts), values, self.server.max_reply_bytes)

    def _request(self, act: dict[str, Any], answer: Callable[[Outcome], None]) -> Request:
        slot = _slot(act)
        params, key, space = self.episodes.get(slot, self.defaults)
        return self.connection.request(
            act["obs"], act.get("seed"), act.get("instruction"), answer, params, key, space, slot=slot
        )


def _plans(request: Request) -> dict[str, Any]:
    """A composite policy's plans this act was the first to use, for the reply (when there are any)."""
    return {"plans": request.plans} if request.plans else {}


def _slot(message: dict[str, Any]) -> int:
    """Which of the client's side-by-side episodes a message is for (0 when it does not say)."""
    slot = message.get("episode", 0)
    if not isinstance(slot, int) or isinstance(slot, bool) or slot < 0:
        raise ValueError(f"an episode slot must be a non-negative integer, got {slot!r}.")
    return slot


def _act_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with an act, if anything."""
    seed, instruction = message.get("seed"), message.get("instruction")
    if "obs" not in message:
        return "an act needs 'obs'."
    if not (seed is None or (isinstance(seed, int) and not isinstance(seed, bool))):
        return f"an act's seed must be an integer, got {seed!r}."
    if not (instruction is None or isinstance(instruction, str)):
        return "an act's instruction must be a string or null."
    try:
        _slot(message)
    except ValueError as error:
        return str(error)
    return None
