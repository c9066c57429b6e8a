"""The Ray backend: the same plan, episode loop and record, with workers as Ray actors.

`seq eval run … --engine ray [--address auto|ray://…]` (install `seq[ray]`). Each actor takes one
CPU and runs `@seq.setup` once, then episodes one at a time, exactly as a local worker does;
results stream back to this process, the one writer of the record. An actor that dies costs its
episode (recorded as an error) and is replaced; one stuck past `timeout_s` is killed by the same
watchdog rule as locally. Ray is imported only when this backend is asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from seq.engine.local import WATCHDOG_GRACE_S, _lost, _Queue, _wedged
from seq.engine.worker import WorkerConfig, build_runners, run_item
from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.store import WorkItem


class _EnvWorker:
    """The body of a Ray actor: one benchmark instance per arm's setup, one env at a time."""

    def __init__(self, config: WorkerConfig) -> None:
        from seq.engine.environment import describe_environment

        started = time.process_time()
        self.runners = build_runners(config)
        self.report = {"environment": describe_environment(), "setup_cpu_s": time.process_time() - started}

    def ready(self) -> dict[str, Any]:
        return self.report

    def run(self, item: WorkItem) -> EpisodeResult:
        return run_item(self.runners, item)


class RayBackend:
    """Runs work items on `envs` Ray actors (a local Ray instance, or the cluster at `address`)."""

    def __init__(self, config: WorkerConfig, envs: int, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise SeqInputError("--engine ray needs Ray: pip install 'seq[ray]'.") from None
        self.ray, self.config, self.envs = ray, config, envs
        if not ray.is_initialized():
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                **({} if address else {"num_cpus": envs}),
            )
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(_EnvWorker)

    def run(
        self,
        items: list[WorkItem],
        on_result: Callable[[EpisodeResult], None],
        on_ready: Callable[[dict[str, Any]], None] | None = None,
        rounds: list[list[WorkItem]] | None = None,
        after_round: Callable[[], bool] | None = None,
    ) -> None:
        """Run every item, calling `on_result` in this thread as each episode finishes."""
        ray = self.ray
        later = list(rounds or [])
        pending = _Queue(items)
        total = len(items) + sum(len(r) for r in later)
        actors = [self.actor_class.remote(self.config) for _ in range(min(self.envs, total))]
        known: dict[Any, set[str]] = {actor: set() for actor in actors}
        ready = {actor.ready.remote(): actor for actor in actors}
        running: dict[Any, tuple[Any, WorkItem, float | None]] = {}  # ref -> (actor, item, deadline)

        def feed(actor: Any) -> None:
            claimed = set().union(*known.values())
            item = pending.take(known[actor], claimed)
            if item is None:
                return
            known[actor].add(item.condition.task)
            timeout = item.condition.timeout_s
            deadline = None if timeout is None else time.monotonic() + timeout + WATCHDOG_GRACE_S
            running[actor.run.remote(item)] = (actor, item, deadline)

        def replace(actor: Any) -> Any:
            ray.kill(actor)
            known.pop(actor, None)
            fresh = self.actor_class.remote(self.config)
            known[fresh] = set()
            ready[fresh.ready.remote()] = fresh
            return fresh

        try:
            while True:
                if not running and not ready and not pending:
                    if later and not (after_round is not None and after_round()):
                        pending.extend(later.pop(0))
                        for actor in list(known):
                            feed(actor)
                        continue
                    break
                deadlines = [d for _, _, d in running.values() if d is not None]
                timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                done, _ = ray.wait([*running, *ready], num_returns=1, timeout=timeout)
                for ref in done:
                    if ref in ready:
                        actor = ready.pop(ref)
                        try:
                            report = ray.get(ref)
                        except ray.exceptions.RayActorError:
                            replace(actor)
                            continue
                        if on_ready is not None:
                            on_ready(report)
                        feed(actor)
                        continue
                    actor, item, _ = running.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayActorError:
                        on_result(_lost(item, None))
                        replace(actor)
                        continue
                    on_result(result)
                    feed(actor)
                for ref, (actor, item, deadline) in list(running.items()):
                    if deadline is not None and deadline <= time.monotonic():
                        running.pop(ref)
                        on_result(_wedged(item))
                        replace(actor)
        finally:
            for actor in list(known):
                ray.kill(actor)


class _PolicyServer:
    """The body of a Ray actor that serves a policy to the eval's environment actors."""

    def __init__(self, policy_ref: dict[str, Any], settings: dict[str, Any], host: str) -> None:
        import secrets

        from seq.registry.loader import load_class
        from seq.serving import serve
        from seq.serving.launch import is_loopback

        # Off loopback a server needs a token: one for this eval, carried in the URL its clients get.
        self.token = None if is_loopback(host) else secrets.token_urlsafe(24)
        self.handle = serve(
            load_class(policy_ref),
            host=host,
            port=0,
            max_batch_size=settings["max_batch_size"],
            max_wait_ms=settings["max_wait_ms"],
            token=self.token,
        )

    def url(self) -> str:
        return self.handle.url if self.token is None else f"{self.handle.url}/?token={self.token}"

    def stats(self) -> dict[str, Any]:
        return self.handle.stats()


@contextmanager
def serve_on_ray(policy_ref: dict[str, Any], settings: dict[str, Any], address: str | None) -> Iterator[str]:
    """A policy server in a Ray actor for the eval's duration; yields its URL. On a local Ray it
    listens on loopback, on a cluster on its node's address."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    host = "127.0.0.1" if address is None else ray.util.get_node_ip_address()
    actor = ray.remote(num_cpus=0, max_restarts=0)(_PolicyServer).remote(policy_ref, settings, host)
    try:
        yield ray.get(actor.url.remote())
    finally:
        ray.kill(actor)
