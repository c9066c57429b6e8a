"""The Ray backend: the same plan, episode loop and record, with workers as Ray actors.

`seq eval run … --engine ray [--address auto|ray://…]` (install `seq[ray]`). Each actor takes one
CPU and runs `@seq.setup` once, then episodes one at a time, exactly as a local worker does;
results stream back to this process, the one writer of the record. An actor that dies costs its
episode (recorded as an error) and is replaced; one stuck past `timeout_s` is killed by the same
watchdog rule as locally. Ray is imported only when this backend is asked for.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from seq.engine.dispatch import DIED, DONE, READY, Message
from seq.engine.worker import build_runners, run_item
from seq.engine.worker_config import WorkerConfig
from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.work import WorkItem


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


@dataclass(eq=False)
class _Actor:
    """One environment actor and the calls it has not answered yet."""

    actor: Any
    calls: dict[Any, str] = field(default_factory=dict)  # object ref -> READY or DONE


class RayBackend:
    """Starts one Ray actor per worker (a local Ray instance, or the cluster at `address`) and moves
    work items and results as actor calls."""

    slots = 1

    def __init__(self, config: WorkerConfig, envs: int, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise SeqInputError("--engine ray needs Ray: pip install 'seq[ray]'.") from None
        self.ray, self.config = ray, config
        if not ray.is_initialized():
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                num_cpus=None if address else envs,
            )
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(_EnvWorker)
        self._actors: list[_Actor] = []

    def start(self) -> _Actor:
        worker = _Actor(self.actor_class.remote(self.config))
        worker.calls[worker.actor.ready.remote()] = READY
        self._actors.append(worker)
        return worker

    def send(self, worker: _Actor, item: WorkItem) -> None:
        worker.calls[worker.actor.run.remote(item)] = DONE

    def receive(self, workers: list[_Actor], timeout: float | None) -> list[tuple[_Actor, Message]]:
        owner = {ref: worker for worker in workers for ref in worker.calls}
        if not owner:
            return []
        done, _ = self.ray.wait(list(owner), num_returns=1, timeout=timeout)
        messages: list[tuple[_Actor, Message]] = []
        for ref in done:
            worker = owner[ref]
            kind = worker.calls.pop(ref)
            try:
                messages.append((worker, (kind, self.ray.get(ref))))
            except self.ray.exceptions.RayActorError as error:
                self.stop(worker)
                cause = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                messages.append((worker, (DIED, f"the Ray actor died ({cause})")))
        return messages

    def stop(self, worker: _Actor) -> None:
        self.ray.kill(worker.actor)
        worker.calls.clear()
        if worker in self._actors:
            self._actors.remove(worker)

    def release(self, worker: _Actor) -> None:
        self.stop(worker)

    def close(self) -> None:
        for worker in list(self._actors):
            self.stop(worker)


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
    actor: Any = ray.remote(num_cpus=0, max_restarts=0)(_PolicyServer).remote(policy_ref, settings, host)
    try:
        yield ray.get(actor.url.remote())
    finally:
        ray.kill(actor)
