"""A worker process: runs the benchmark's setup once (per arm's setup parameters), then episodes.

It is started as `python -m seq.engine FD` and talks to the runner over that socket: it
receives its `WorkerConfig` first, then sends `("ready", environment)` once set up, then one
`("done", EpisodeResult)` per work item it is given (up to `envs_per_worker` of them run at once;
`("slots", N)` when it opens more of them: `seq.engine.lockstep`),
and exits when the socket closes (so a runner killed with SIGKILL leaves no worker behind) — or
after an episode that ran past its memory limit, which it sends as `("spent", EpisodeResult)`.
An episode that ended while its observers still write its files (a video being encoded) is first
announced as `("ended", item_id)`, which frees its slot for the next work item; its `done` follows
once the files are complete (one such episode at a time: a second waits for the first).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from seq.authoring.benchmark import spec_of
from seq.authoring.env_contract import close_env
from seq.authoring.policy import policy_spec_of
from seq.engine.environment import describe_environment
from seq.engine.episode import EpisodeRunner
from seq.engine.failures import SetupFailed
from seq.engine.lockstep import Lockstep, Runner
from seq.engine.logs import TAG_VARIABLE, tag_line
from seq.engine.observer import Finishing, build_observers
from seq.engine.wire import Channel
from seq.engine.worker_config import ArmConfig, WorkerConfig
from seq.engine.worker_lifecycle import RUNNER_VARIABLE
from seq.record.episode import BENCHMARK, ERROR, POLICY, EpisodeResult
from seq.record.states import PolicyProtocol
from seq.record.work import WorkItem
from seq.registry.instances import equip, load_policy
from seq.registry.loader import IN_MEMORY, load_class
from seq.serving.adapted import AdaptedPolicy
from seq.serving.inline import InlinePolicy, PolicyHandle

MAX_FINISHING = 1  # ended episodes whose files are being written while the next one runs
FINISHING_POLL_S = 0.005  # how often an idle worker looks whether they are done


class _EnvCloser:
    """Remembers every distinct env the benchmark handed out, to close them at exit."""

    def __init__(self) -> None:
        self._envs: list[Any] = []
        self._ids: set[int] = set()

    def add(self, env: Any) -> None:
        if id(env) in self._ids:
            return
        try:
            self._envs.append(weakref.ref(env))
        except TypeError:
            return
        self._ids.add(id(env))

    def close_all(self) -> None:
        for ref in self._envs:
            env = ref()
            if env is not None:
                close_env(env)


def _policy_handle(arm: ArmConfig, closer: _EnvCloser | None) -> PolicyHandle:
    """The arm's policy as the episode loop drives it: served, or loaded here; through its adapter."""
    handle: PolicyHandle
    if arm.policy_url is not None:  # served: the same episode loop talks to it over a socket
        from seq.serving.client import connect

        parameters = arm.policy_parameters if arm.protocol == PolicyProtocol.SEQ else None
        handle = connect(
            arm.policy_url, protocol=arm.protocol, parameters=parameters, image_encoding=arm.image_encoding
        )
        if closer is not None:
            closer.add(handle)
    else:
        policy_cls = load_class(arm.policy_ref)
        if "in_memory" in arm.policy_ref:  # the caller's own object, loaded (trained) already
            policy = IN_MEMORY[arm.policy_ref["in_memory"]]
            equip(policy, policy_spec_of(policy_cls))
        else:  # in a worker process (started by a runner), its weights are sealed read-only
            policy = load_policy(policy_cls, seal_weights=os.environ.get(RUNNER_VARIABLE) is not None)
        handle = InlinePolicy(policy, arm.policy_parameters)
    if arm.adapter_ref is not None:  # reset → (adapter → policy → adapter) → step
        from seq.registry.adapters import load_adapter

        handle = AdaptedPolicy(handle, load_adapter(arm.adapter_ref, arm.adapter_parameters))
    return handle


def build_slots(
    config: WorkerConfig,
    closer: _EnvCloser | None = None,
    on_finishing: Callable[[Finishing], None] | None = None,
) -> list[dict[str, Runner]]:
    """Each of the worker's `envs_per_worker` slots: every arm's episode runner, with the slot's own
    benchmark instances (`@seq.setup` once per slot and distinct set of setup parameters; a batched
    benchmark's once per worker, its slots' envs being worlds that step together) and observers;
    the arm's policy handle (`@seq.load`, or its server's connection) is shared by all slots. An
    arm whose setup or load raised maps to that failure (`SetupFailed`) instead. `on_finishing`:
    see `EpisodeRunner` (without it an episode waits for its observers' files)."""
    benchmark_cls = load_class(config.benchmark_ref)
    spec = spec_of(benchmark_cls)
    handles: dict[str, PolicyHandle | SetupFailed] = {}
    for name, arm in config.arms.items():
        try:
            handles[name] = _policy_handle(arm, closer)
        except Exception as error:
            handles[name] = SetupFailed.from_exception(error, POLICY)
    slots = []
    benchmarks: dict[str, Any] = {}  # a batched benchmark's slots share them: one set of worlds
    for _ in range(config.envs_per_worker):
        observers = build_observers(config.observers)
        if not spec.batched:
            benchmarks = {}
        runners: dict[str, Runner] = {}
        for name, arm in config.arms.items():
            handle = handles[name]
            if isinstance(handle, SetupFailed):
                runners[name] = handle
                continue
            try:
                key = json.dumps(arm.setup_parameters, sort_keys=True)
                if key not in benchmarks:
                    benchmarks[key] = benchmark_cls()
                    if "setup" in spec.hooks:
                        getattr(benchmarks[key], spec.hooks["setup"])(**arm.setup_parameters)
                runners[name] = EpisodeRunner(
                    benchmarks[key],
                    spec,
                    handle,
                    arm.steps_per_query,
                    on_env=closer.add if closer else None,
                    observers=observers,
                    on_finishing=on_finishing,
                )
            except Exception as error:
                runners[name] = SetupFailed.from_exception(error, BENCHMARK)
        slots.append(runners)
    return slots


def build_runners(config: WorkerConfig, closer: _EnvCloser | None = None) -> dict[str, Runner]:
    """Each arm's episode runner for one episode at a time (see `build_slots`)."""
    return build_slots(replace(config, envs_per_worker=1), closer)[0]


def run_item(runners: dict[str, Runner], item: WorkItem) -> EpisodeResult:
    """One work item, one episode at a time, by its arm's runner; an arm whose setup failed makes
    that the episode's error."""
    runner = runners[item.arm]
    if isinstance(runner, SetupFailed):
        return runner.result(item)
    return runner.run(item)


def _over_memory(result: Any) -> bool:
    """Whether an episode ran out of memory under `memory=`; if so, its error names the limit."""
    from seq.authoring.resources import memory_text
    from seq.engine.worker_lifecycle import worker_memory_limit

    limit = worker_memory_limit()
    if limit is None or result.status != ERROR or "MemoryError" not in (result.error or ""):
        return False
    result.error = (
        f"the episode ran past its worker's memory limit of {memory_text(limit)} (the benchmark's "
        f"memory= shared by its workers); it was stopped and its worker replaced:\n{result.error}"
    )
    return True


def _send(connection: Channel, result: EpisodeResult) -> bool:
    """Send an ended episode's result; False when the worker must stop: the episode ran past its
    memory limit, and what it allocated may still be held, so a fresh worker takes over."""
    if _over_memory(result):
        connection.send(("spent", result))
        return False
    connection.send(("done", result))
    return True


class _ArmTags:
    """Tells the runner, on this worker's own output, which arm the lines that follow belong to:
    the arm of the episodes it runs, or none while they are of several arms (`seq.engine.logs`)."""

    def __init__(self) -> None:
        self.enabled = os.environ.get(TAG_VARIABLE) == "1"
        self.running: dict[str, str] = {}
        self.shown: str | None = None

    def started(self, item: WorkItem) -> None:
        self.running[item.item_id] = item.arm
        arms = set(self.running.values())
        arm = arms.pop() if len(arms) == 1 else ""
        if self.enabled and arm != self.shown:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os.write(1, tag_line(arm))
            self.shown = arm

    def ended(self, item_id: str) -> None:
        self.running.pop(item_id, None)


def worker_main(connection: Channel, assets: str | None = None) -> None:
    """Serve work items from the runner until it closes the connection; `assets` says how the
    benchmark's volume is seen, for the eval's manifest."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C cancels
    try:
        config: WorkerConfig = connection.recv()
    except (EOFError, OSError):
        return
    closer = _EnvCloser()
    finishing: deque[Finishing] = deque()  # ended episodes whose files are still being written
    try:
        slots = build_slots(config, closer, on_finishing=finishing.append)
    except Exception as error:  # the benchmark class itself cannot be loaded
        failed = SetupFailed.from_exception(error, BENCHMARK)
        slots = [{name: failed for name in config.arms}]
    episodes = Lockstep(slots, config.open_slots_as_they_pay)
    tags = _ArmTags()

    def report(result: EpisodeResult) -> bool:
        """Send an ended episode (announce it, if its files are still being written); False: stop."""
        tags.ended(result.item_id)
        if not any(waiting.result is result for waiting in finishing):
            return _send(connection, result)
        while len(finishing) > MAX_FINISHING:  # the oldest first, so that at most one is pending
            if not _send(connection, finishing.popleft().finish()):
                return False
        connection.send(("ended", result.item_id))
        return True

    try:
        ready = {"environment": describe_environment(), "setup_cpu_s": time.process_time(), "assets": assets}
        connection.send(("ready", {**ready, "slots": episodes.open}))
        while True:
            while finishing and finishing[0].done():
                if not _send(connection, finishing.popleft().finish()):
                    return
            # take new work while a slot is free: wait for it when nothing runs, else only what is there
            while episodes.free and (episodes.idle or connection.poll()):
                if episodes.idle and finishing and not connection.poll(FINISHING_POLL_S):
                    break  # no work yet: see whether a file is done
                try:
                    item: WorkItem = connection.recv()
                except (EOFError, OSError):
                    return
                tags.started(item)
                ended = episodes.start(item)
                if ended is not None and not report(ended):
                    return
            opened = episodes.open
            for _, result in episodes.step():
                if not report(result):
                    return
            if episodes.open != opened:
                connection.send(("slots", episodes.open))
    except (BrokenPipeError, EOFError, OSError):
        pass
    finally:
        closer.close_all()
