"""A worker's episodes side by side: `envs_per_worker` slots, their acts asked for together.

A worker process normally runs one episode at a time, and a served policy then costs one round
trip per act. With K slots it runs up to K episodes at once, each in its own copy of the benchmark
(so a benchmark that keeps one env per task never hands one env to two episodes), and steps them
in turn: every episode runs until it needs the policy, then the worker asks for all the pending
chunks at once (`act_many`: one `act_batch` message to a served policy, one call of a batched
one). Each episode's seeds, chunks and `steps_per_query` are its own, so its row is the same as
when it runs alone. A batched benchmark's episodes (`seq.engine.batch`) share one benchmark
instance, and their worlds advance together: one physics step once every episode has its action.

Opened as they pay (`open_slots_as_they_pay`, when seq chose the count): a worker runs one episode until
that episode has waited on the policy longer than the worker's first episode to reach an act took
to get there (its env built, its simulator imported; an episode whose reset failed measures
nothing), then opens every slot. Against a policy that answers at once a worker so builds no envs
it would barely use; against a slow one it opens its slots within a few acts.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from seq.engine.batch import BatchStep
from seq.engine.episode import EpisodeRunner
from seq.engine.failures import SetupFailed
from seq.record.episode import EpisodeResult
from seq.record.work import WorkItem
from seq.serving.inline import ActRequest, act_all

Runner = EpisodeRunner | SetupFailed  # an arm's episode runner, or why its setup failed


@dataclass
class _Running:
    item: WorkItem
    episode: Generator[ActRequest | BatchStep, Any, EpisodeResult]
    runner: EpisodeRunner
    request: ActRequest | BatchStep
    cpu_s: float
    waited_s: float = 0.0  # wall time its acts took to come back


class Lockstep:
    """Up to `len(slots)` episodes at once; `slots[i]` maps each arm to slot i's runner (or to
    that arm's failed setup). All slots of an arm share one policy handle."""

    def __init__(self, slots: list[dict[str, Runner]], open_slots_as_they_pay: bool = False) -> None:
        self.slots = slots
        self.open = 1 if open_slots_as_they_pay else len(slots)  # the slots episodes may start in
        self.running: dict[int, _Running] = {}
        self.tasks: dict[int, set[str]] = {}  # the tasks each slot has run (and may keep an env of)
        self.first_start_s: float | None = None  # the worker's first episode to act, start to first act

    @property
    def free(self) -> bool:
        return len(self.running) < self.open

    @property
    def idle(self) -> bool:
        return not self.running

    def start(self, item: WorkItem) -> EpisodeResult | None:
        """Start `item` in a free slot and run it to its first act; its result if it ended already."""
        slot = self._slot_for(item.condition.task)
        self.tasks.setdefault(slot, set()).add(item.condition.task)
        runner = self.slots[slot][item.arm]
        if isinstance(runner, SetupFailed):
            return runner.result(item)
        started, cpu_start = time.perf_counter(), time.process_time()
        episode = runner.episode(item, slot)
        try:
            request = next(episode)
        except StopIteration as stop:  # it ended before its first act (its reset failed): no measure
            return stop.value
        if self.first_start_s is None:
            self.first_start_s = time.perf_counter() - started
        self.running[slot] = _Running(item, episode, runner, request, time.process_time() - cpu_start)
        return None

    def _slot_for(self, task: str) -> int:
        """A free slot that ran `task` before, else one that ran nothing, else any: a benchmark that
        keeps one env per task then builds about one per slot, not one per slot and task."""
        free = [index for index in range(self.open) if index not in self.running]
        knows = [index for index in free if task in self.tasks.get(index, ())]
        fresh = [index for index in free if index not in self.tasks]
        return (knows or fresh or free)[0]

    def step(self) -> list[tuple[WorkItem, EpisodeResult]]:
        """Ask for the chunks of the episodes that need one, all at once, and run each to its next
        act, its end, or its batch's step; then step each batch once (`seq.engine.batch`: every
        running episode of a batched benchmark has staged its action by then) and run its
        episodes on. Returns the episodes that ended, with their CPU time their own share of the
        worker's."""
        ended = self._answer([slot for slot, running in self.running.items()
                              if isinstance(running.request, ActRequest)])
        self._open_if_it_pays()
        waiting: dict[int, list[int]] = {}
        for slot, running in self.running.items():
            if isinstance(running.request, BatchStep):
                waiting.setdefault(id(running.request.batch), []).append(slot)
        for slots in waiting.values():
            cpu_start = time.process_time()
            try:
                self.running[slots[0]].request.batch.step()  # type: ignore[union-attr]
                outcome: Any = None
            except Exception as error:  # the benchmark's simulator failed: each of its episodes ends so
                outcome = error
            share = (time.process_time() - cpu_start) / len(slots)
            for slot in slots:
                self.running[slot].cpu_s += share
                finished = self._resume(slot, outcome)
                if finished is not None:
                    ended.append(finished)
        return ended

    def _answer(self, asking: list[int]) -> list[tuple[WorkItem, EpisodeResult]]:
        """Ask each policy handle for its asking episodes' chunks at once; resume each with its own."""
        by_handle: dict[int, list[int]] = {}
        for slot in asking:
            by_handle.setdefault(id(self.running[slot].runner.policy), []).append(slot)
        replies: dict[int, Any] = {}
        origins: dict[int, Any] = {}  # where a shared error was raised: each episode gets that trace alone
        for slots in by_handle.values():
            handle = self.running[slots[0]].runner.policy
            started, cpu_start = time.perf_counter(), time.process_time()
            try:
                requests = [self.running[slot].request for slot in slots]
                outcomes = act_all(handle, requests)  # type: ignore[arg-type]
            except Exception as error:  # nothing answered (the server is unreachable): each episode fails
                outcomes = [error] * len(slots)
                origins.update(dict.fromkeys(slots, error.__traceback__))
            share = (time.process_time() - cpu_start) / len(slots)
            waited = time.perf_counter() - started
            for slot, outcome in zip(slots, outcomes, strict=True):
                replies[slot] = outcome
                self.running[slot].cpu_s += share
                self.running[slot].waited_s += waited
        ended = []
        for slot, reply in replies.items():
            if isinstance(reply, BaseException) and slot in origins:
                reply.with_traceback(origins[slot])
            finished = self._resume(slot, reply)
            if finished is not None:
                ended.append(finished)
        return ended

    def _open_if_it_pays(self) -> None:
        """Open every slot once a running episode has waited on its acts longer than a fresh
        slot's first episode takes to start: running the others beside it then pays for their
        envs with the waits they share."""
        if self.open == len(self.slots) or self.first_start_s is None:
            return
        if any(running.waited_s > self.first_start_s for running in self.running.values()):
            self.open = len(self.slots)

    def _resume(self, slot: int, reply: Any) -> tuple[WorkItem, EpisodeResult] | None:
        """Send (or throw) `reply` into the slot's episode; the episode, if it ended."""
        running = self.running[slot]
        cpu_start = time.process_time()
        try:
            if isinstance(reply, BaseException):
                running.request = running.episode.throw(reply)
            else:
                running.request = running.episode.send(reply)
            running.cpu_s += time.process_time() - cpu_start
        except StopIteration as stop:
            result: EpisodeResult = stop.value
            result.cpu_s = running.cpu_s + time.process_time() - cpu_start
            del self.running[slot]
            return running.item, result
        return None
