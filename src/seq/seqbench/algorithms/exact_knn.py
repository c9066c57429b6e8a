"""`exact-knn`: exact (brute-force) k-nearest neighbours over token n-gram features of the input.

Features: unigrams, bigrams, the first token, and the last three tokens by position (weighted up,
since the end of an input is where the question is). Similarity is the cosine over all stored
examples, computed exactly with a sparse matrix product. The k = 5 nearest vote for their targets,
weighted by similarity; ties go to the most recent example, so a one-example correction wins.
Probabilities: 0.9 × the vote share + 0.1 spread uniformly over the known targets and one "other".
Deterministic: seed-invariant.
"""

from __future__ import annotations

import math

import numpy as np

try:
    import algorithm_io  # run as a script: this folder is on sys.path
except ImportError:  # run as python -m seq.seqbench.algorithms.exact_knn
    from seq.seqbench.algorithms import algorithm_io

K = 5
SUFFIX_WEIGHTS = (3.0, 2.0, 1.0)
VOTE_MASS = 0.9


def features(text: str) -> dict[str, float]:
    tokens = text.split()
    found: dict[str, float] = {}
    for token in tokens:
        found["u:" + token] = 1.0
    for a, b in zip(tokens, tokens[1:], strict=False):
        found[f"b:{a}_{b}"] = 1.0
    if tokens:
        found["f:" + tokens[0]] = 2.0
    for position, weight in enumerate(SUFFIX_WEIGHTS, start=1):
        if len(tokens) >= position:
            found[f"s{position}:{tokens[-position]}"] = weight
    return found


def _matrix(texts: list[str], index: dict[str, int], grow: bool):
    from scipy import sparse

    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        feats = features(text)
        norm = math.sqrt(sum(v * v for v in feats.values())) or 1.0
        for name, value in feats.items():
            column = index.get(name)
            if column is None:
                if not grow:
                    continue
                column = index[name] = len(index)
            rows.append(row)
            cols.append(column)
            values.append(value / norm)
    return sparse.csr_matrix((values, (rows, cols)), shape=(len(texts), max(1, len(index))))


def learn(model: dict, examples: list[dict], seed: int, budget: dict) -> dict:
    stored = list(model.get("examples", []))
    stored += [[e["input"], e["target"]] for e in examples]
    return {"kind": "exact-knn", "k": K, "examples": stored}


def infer(model: dict, requests: list[dict]) -> list[dict]:
    stored = model.get("examples", [])
    inputs = sorted({r["input"] for r in requests})
    votes_by_input: dict[str, dict[str, float]] = {text: {} for text in inputs}
    targets = sorted({t for _, t in stored})
    if stored and inputs:
        index: dict[str, int] = {}
        train = _matrix([text for text, _ in stored], index, grow=True)
        query = _matrix(inputs, index, grow=False)
        if query.shape[1] < train.shape[1]:
            query.resize((query.shape[0], train.shape[1]))
        similarity = (query @ train.T).toarray()
        similarity += np.arange(len(stored)) * 1e-9  # later examples win ties
        k = min(K, len(stored))
        for row, text in enumerate(inputs):
            nearest = np.argpartition(-similarity[row], k - 1)[:k]
            votes = votes_by_input[text]
            for j in nearest:
                target = stored[j][1]
                votes[target] = votes.get(target, 0.0) + max(float(similarity[row, j]), 1e-6)
    answers = []
    slots = len(targets) + 1
    for request in requests:
        votes = votes_by_input[request["input"]]
        if request["kind"] == "generate":
            best = max(votes.items(), key=lambda kv: (kv[1], kv[0]))[0] if votes else ""
            answers.append({"id": request["id"], "output": best})
        elif not stored:
            answers.append({"id": request["id"], "log_probability": None})
        else:
            total = sum(votes.values()) or 1.0
            p = VOTE_MASS * votes.get(request["target"], 0.0) / total + (1 - VOTE_MASS) / slots
            answers.append({"id": request["id"], "log_probability": math.log(p)})
    return answers


if __name__ == "__main__":
    algorithm_io.run(learn, infer)
