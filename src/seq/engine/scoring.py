"""Run a benchmark's `@seq.score` once per group (all episodes, each suite's, each task's) on an
instance whose `@seq.setup` ran, so that score reads what setup built (`self.settings`, say).

Each arm's groups are scored by an instance set up with that arm's setup parameters. A benchmark
that declares where it runs (an image, a volume, secrets, a memory limit) is scored where its
episodes ran: in a process started like its workers (`python -m seq.engine.score_process FD`, the image's
Python, the volume at /assets, its secrets); any other is scored in the runner's process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from seq.authoring.benchmark import spec_of
from seq.record.episode import EpisodeResult
from seq.record.groups import groups
from seq.record.store import GroupKey, Store

if TYPE_CHECKING:
    from seq.engine.wire import Channel
    from seq.engine.worker_isolation import WorkerProcess

Scores = dict[GroupKey, tuple[dict[str, float] | None, str | None]]
SETUP_FAILED = "@seq.setup raised, so @seq.score could not run:\n"


def score_here(
    benchmark_cls: type,
    setup_parameters: Mapping[str, Mapping[str, Any]],
    grouped: Mapping[GroupKey, list[EpisodeResult]],
) -> Scores:
    """Score every group in this process: one instance per distinct set of setup parameters, set up
    once; a setup that raises is every one of its groups' error."""
    spec = spec_of(benchmark_cls)
    instances: dict[str, Any] = {}
    scored: Scores = {}
    for key, members in grouped.items():
        parameters = dict(setup_parameters.get(key[0], {}))
        label = json.dumps(parameters, sort_keys=True, default=str)
        if label not in instances:
            instance = benchmark_cls()
            try:
                if "setup" in spec.hooks:
                    getattr(instance, spec.hooks["setup"])(**parameters)
                instances[label] = getattr(instance, spec.hooks["score"])
            except Exception:
                instances[label] = SETUP_FAILED + traceback.format_exc()
        score = instances[label]
        if isinstance(score, str):
            scored[key] = (None, score)
            continue
        try:
            values = score(members)
            if not isinstance(values, dict):
                raise TypeError(f"@seq.score returned {type(values).__name__}; expected a dict of numbers.")
            scored[key] = ({str(k): float(v) for k, v in values.items()}, None)
        except Exception:
            scored[key] = (None, traceback.format_exc())
    return scored


def score_eval(
    benchmark_cls: type,
    benchmark_ref: dict[str, Any],
    setup_parameters: Mapping[str, Mapping[str, Any]],
    store: Store,
    eval_id: str,
    process: WorkerProcess | None = None,
) -> Scores:
    """Each group's score values (or the error its score hook raised), over episodes that did not
    error; `process`: score in a process started like the eval's workers, else here."""
    if "score" not in spec_of(benchmark_cls).hooks:
        return {}
    grouped = groups(r for r in store.episodes(eval_id) if r.ok)
    if not grouped:
        return {}
    if process is None:
        return score_here(benchmark_cls, setup_parameters, grouped)
    return _score_apart(benchmark_ref, setup_parameters, grouped, process)


def _score_apart(
    benchmark_ref: dict[str, Any],
    setup_parameters: Mapping[str, Mapping[str, Any]],
    grouped: Mapping[GroupKey, list[EpisodeResult]],
    process: WorkerProcess,
) -> Scores:
    """Score in a process of the benchmark's own environment; what it prints goes to stderr, masked."""
    from seq.engine.wire import Channel

    episodes = list({id(r): r for members in grouped.values() for r in members}.values())
    index = {id(r): i for i, r in enumerate(episodes)}
    request = {
        "benchmark_ref": benchmark_ref,
        "setup_parameters": {arm: dict(values) for arm, values in setup_parameters.items()},
        "episodes": episodes,
        "groups": [[*key, [index[id(r)] for r in members]] for key, members in grouped.items()],
    }
    ours, theirs = socket.socketpair()
    child = subprocess.Popen(
        [process.python, "-m", "seq.engine.score_process", str(theirs.fileno())],
        pass_fds=[theirs.fileno()],
        env=process.environment_for(dict(os.environ)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    theirs.close()
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.extend(child.stdout or ()), daemon=True)
    reader.start()
    connection = Channel(Connection(ours.detach()))
    scored: Scores = {}
    try:
        connection.send(request)
        answer = connection.recv()
        scored = {(arm, kind, name): (values, error) for arm, kind, name, values, error in answer}
    except (EOFError, OSError):
        pass
    finally:
        connection.close()
        code = child.wait()
        reader.join()
    printed = b"".join(output).decode(errors="replace")
    if printed:
        sys.stderr.write(process.masker.text(printed))
    if not scored:
        why = f"the process that runs @seq.score died (exit code {code}) before it answered"
        return {key: (None, why + (f":\n{printed[-2000:]}" if printed else ".")) for key in grouped}
    return {key: (values, process.masker.text(error)) for key, (values, error) in scored.items()}


def serve_scores(connection: Channel) -> None:
    """In the scoring process: load the benchmark, score the groups it is sent, send them back."""
    from seq.registry.loader import load_class

    request = connection.recv()
    episodes = request["episodes"]
    grouped = {
        (arm, kind, name): [episodes[i] for i in members] for arm, kind, name, members in request["groups"]
    }
    try:
        benchmark_cls = load_class(request["benchmark_ref"])
        scored = score_here(benchmark_cls, request["setup_parameters"], grouped)
    except Exception:
        error = "the benchmark could not be loaded to run @seq.score:\n" + traceback.format_exc()
        scored = {key: (None, error) for key in grouped}
    connection.send([[*key, values, error] for key, (values, error) in scored.items()])
