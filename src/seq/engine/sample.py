"""`python -m seq.engine.sample`: a benchmark's first observations, sampled where it runs.

A benchmark that declares an image, a volume or secrets cannot be reset in the runner's process
(its simulator may not be installed there; its assets and secrets are not there), so the check of a
policy's inputs against its observation samples one in a process started as its workers are:
the image's Python, the volume mounted, the secrets set. The request comes on stdin and the
observations (or the reason there are none) go back on stdout, in seq's codec.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from seq.authoring.conditions import Condition
from seq.errors import SeqInputError
from seq.serving.codec import pack, unpack


def sample_in_isolation(
    benchmark: str,
    benchmark_ref: Mapping[str, Any],
    declared: Mapping[str, Any],
    setup_parameters: Mapping[str, Any],
    conditions: Sequence[Condition],
) -> list[Any]:
    """The benchmark's observations (see `compatibility.sample_observations`), from a process
    isolated as its workers are."""
    from seq.engine.local import SINGLE_THREADED
    from seq.engine.worker_process import isolate

    process = isolate(benchmark, declared, 1).process
    request = {
        "benchmark_ref": dict(benchmark_ref),
        "setup_parameters": dict(setup_parameters),
        "conditions": [{**dataclasses.asdict(c), "extra": dict(c.extra)} for c in list(conditions)[:3]],
        "label": benchmark,
    }
    done = subprocess.run(
        [process.python, "-m", "seq.engine.sample"],
        input=pack(request),
        capture_output=True,
        env=process.environment_for({**SINGLE_THREADED, **os.environ}),
        timeout=600,
    )
    if done.returncode != 0 or not done.stdout:
        lines = done.stderr.decode(errors="replace").strip().splitlines() or [f"exit code {done.returncode}"]
        reason = process.masker.text(lines[-1])
        raise SeqInputError(
            f"benchmark {benchmark}: sampling its observation in its own environment failed ({reason})."
        )
    reply = unpack(done.stdout)
    if reply["error"] is not None:
        raise SeqInputError(process.masker.text(reply["error"]))
    return reply["observations"]


def main() -> None:
    from seq.engine.worker_start import enter_worker_limits

    enter_worker_limits()
    from seq.engine.compatibility import sample_observations
    from seq.registry.loader import load_class

    request = unpack(sys.stdin.buffer.read())
    conditions = [Condition(**c) for c in request["conditions"]]
    try:
        cls = load_class(request["benchmark_ref"])
        observations = sample_observations(cls, request["setup_parameters"], conditions, request["label"])
        reply: dict[str, Any] = {"observations": observations, "error": None}
    except SeqInputError as error:
        reply = {"observations": [], "error": str(error)}
    sys.stdout.buffer.write(pack(reply))


if __name__ == "__main__":
    main()
