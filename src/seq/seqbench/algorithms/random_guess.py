"""`random`: answers with a uniformly random training target; scores every known target 1/|targets|.

A chance-level reference: its learn call only collects the distinct training targets and its seed.
Generation is random per (seed, input); scoring is uniform over the known targets and exactly zero
(`null`) for any other string.
"""

from __future__ import annotations

import math
import random

try:
    import algorithm_io  # run as a script: this folder is on sys.path
except ImportError:  # run as python -m seq.seqbench.algorithms.random_guess
    from seq.seqbench.algorithms import algorithm_io


def learn(model: dict, examples: list[dict], seed: int, budget: dict) -> dict:
    targets = set(model.get("targets", [])) | {e["target"] for e in examples}
    return {"kind": "random", "seed": seed, "targets": sorted(targets)}


def infer(model: dict, requests: list[dict]) -> list[dict]:
    targets = model.get("targets", [])
    known = set(targets)
    answers = []
    for request in requests:
        if request["kind"] == "generate":
            rng = random.Random(f"{model.get('seed', 0)}:{request['input']}")
            answers.append({"id": request["id"], "output": rng.choice(targets) if targets else ""})
        else:
            log_p = -math.log(len(targets)) if request["target"] in known else None
            answers.append({"id": request["id"], "log_probability": log_p})
    return answers


if __name__ == "__main__":
    algorithm_io.run(learn, infer)
