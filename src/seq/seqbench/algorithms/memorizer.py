"""`memorizer`: a lookup table from training input to its latest target.

A seen input gets its stored target (probability one; any other string exactly zero). An unseen
input gets the most frequent training target, and scores from the training target frequencies.
Deterministic, so it declares itself seed-invariant.
"""

from __future__ import annotations

import math
from collections import Counter

try:
    import algorithm_io  # run as a script: this folder is on sys.path
except ImportError:  # run as python -m seq.seqbench.algorithms.memorizer
    from seq.seqbench.algorithms import algorithm_io


def learn(model: dict, examples: list[dict], seed: int, budget: dict) -> dict:
    table = dict(model.get("table", {}))
    counts = Counter(model.get("counts", {}))
    for example in examples:
        table[example["input"]] = example["target"]
        counts[example["target"]] += 1
    return {"kind": "memorizer", "table": table, "counts": dict(counts)}


def infer(model: dict, requests: list[dict]) -> list[dict]:
    table, counts = model.get("table", {}), model.get("counts", {})
    total = sum(counts.values())
    fallback = max(sorted(counts), key=counts.get) if counts else ""
    answers = []
    for request in requests:
        stored = table.get(request["input"])
        if request["kind"] == "generate":
            answers.append({"id": request["id"], "output": stored if stored is not None else fallback})
        elif stored is not None:
            answers.append(
                {"id": request["id"], "log_probability": 0.0 if request["target"] == stored else None}
            )
        else:
            count = counts.get(request["target"], 0)
            answers.append(
                {"id": request["id"], "log_probability": math.log(count / total) if count else None}
            )
    return answers


if __name__ == "__main__":
    algorithm_io.run(learn, infer)
