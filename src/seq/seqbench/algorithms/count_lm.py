"""`count-lm`: a small count-based sequence model, the strong reference.

It predicts the target one token at a time from the history (the input, then the target so far):

- `ngram`: a Witten–Bell interpolated 4-gram over `input <sep> target`, counted at target positions,
  backing off to uniform over the known output tokens (a token never seen as output has probability 0).
- `copy`: induction copying: find the latest earlier occurrence of the last token and copy the
  token after it (skipping function tokens, those in ≥ 90% of the inputs of this task word).
- `copy2`: copying twice (follow a chain of two links).
- `copy_then_ngram`: copy, then predict from the n-gram with the copied token as context
  (an in-context pointer into learned facts).

Which of these gives the first target token is decided per task word (the first input token) by
accuracy on a held-out fifth of each learn call's examples; later tokens come from `ngram`. A learn
call that continues from a trained checkpoint halves the old counts first, so recent examples (a
one-example correction) outweigh older ones. Counts are deterministic: seed-invariant.
"""

from __future__ import annotations

import hashlib
import json
import math

try:
    import algorithm_io  # run as a script: this folder is on sys.path
except ImportError:  # run as python -m seq.seqbench.algorithms.count_lm
    from seq.seqbench.algorithms import algorithm_io

END, SEP = "</s>", "<sep>"
ORDER = 4
DECAY = 0.5
FUNCTION_SHARE = 0.9
COMPONENTS = ("copy2", "copy_then_ngram", "copy", "ngram")  # ties go to the first
POINT_MASS = 0.9
MAX_TOKENS = 16


def _empty() -> dict:
    return {
        "kind": "count-lm",
        "counts": {str(o): {} for o in range(1, ORDER + 1)},
        "df": {},
        "docs": {},
        "tallies": {},
    }


class Model:
    """The counts, with the totals Witten–Bell needs computed once."""

    def __init__(self, data: dict) -> None:
        self.data = data if data.get("kind") == "count-lm" else _empty()
        self.counts: dict[str, dict[str, dict[str, float]]] = self.data["counts"]
        self.refresh()

    def refresh(self) -> None:
        self.totals = {o: {c: sum(f.values()) for c, f in table.items()} for o, table in self.counts.items()}
        self.vocabulary = sorted(self.counts["1"].get("", {}))
        self.uniform = 1.0 / max(1, len(self.vocabulary))

    def add(self, tokens: list[str], target: list[str], weight: float = 1.0) -> None:
        history = [*tokens, SEP]
        for token in [*target, END]:
            for order in range(1, ORDER + 1):
                context = " ".join(history[len(history) - order + 1 :]) if order > 1 else ""
                followers = self.counts[str(order)].setdefault(context, {})
                followers[token] = followers.get(token, 0.0) + weight
            history.append(token)

    def note_input(self, tokens: list[str]) -> None:
        word = tokens[0] if tokens else ""
        self.data["docs"][word] = self.data["docs"].get(word, 0) + 1
        df = self.data["df"].setdefault(word, {})
        for token in set(tokens):
            df[token] = df.get(token, 0) + 1

    def is_function(self, word: str, token: str) -> bool:
        docs = self.data["docs"].get(word, 0)
        return docs >= 4 and self.data["df"].get(word, {}).get(token, 0) >= FUNCTION_SHARE * docs

    def ngram(self, history: list[str]) -> dict[str, float]:
        """P(next | last three tokens), Witten–Bell interpolated down to uniform over the known tokens."""
        probs = {t: self.uniform for t in self.vocabulary}
        for order in range(1, ORDER + 1):
            if order > 1 and len(history) < order - 1:
                break
            context = " ".join(history[len(history) - order + 1 :]) if order > 1 else ""
            followers = self.counts[str(order)].get(context)
            if not followers:
                continue
            total, distinct = self.totals[str(order)][context], len(followers)
            backoff = distinct / (total + distinct)
            probs = {t: backoff * p for t, p in probs.items()}
            for token, count in followers.items():
                probs[token] = probs.get(token, 0.0) + count / (total + distinct)
        return probs

    def copy(self, history: list[str], word: str, start: str | None = None) -> str | None:
        """The token after the latest earlier occurrence of `start` (default: the last token)."""
        last = len(history) - 1
        key = history[-1] if start is None else start
        limit = last - 1 if start is None else last
        for i in range(limit - 1, -1, -1):
            if history[i] == key and i + 1 <= limit and not self.is_function(word, history[i + 1]):
                return history[i + 1]
        return None

    def first_token(self, tokens: list[str], component: str) -> dict[str, float]:
        """The distribution of the first target token given the input tokens, under one component."""
        word = tokens[0] if tokens else ""
        base = self.ngram([*tokens, SEP])
        if component == "ngram":
            return base
        hop = self.copy(tokens, word)
        if hop is None:
            return base
        if component == "copy2":
            hop = self.copy(tokens, word, start=hop)
            if hop is None:
                return base
        if component == "copy_then_ngram":
            pointed = self.ngram([hop, SEP])
            mixed = {t: POINT_MASS * p for t, p in pointed.items()}
            for t, p in base.items():
                mixed[t] = mixed.get(t, 0.0) + (1 - POINT_MASS) * p
            return mixed
        mixed = {t: (1 - POINT_MASS) * p for t, p in base.items()}
        mixed[hop] = mixed.get(hop, 0.0) + POINT_MASS
        return mixed

    def gate(self, word: str) -> str:
        tallies = self.data["tallies"].get(word)
        if not tallies:
            return "ngram"
        return max(
            COMPONENTS, key=lambda c: (tallies.get(c, [0, 0])[0] + 1) / (tallies.get(c, [0, 0])[1] + 2)
        )

    def distribution(self, tokens: list[str], prefix: list[str]) -> dict[str, float]:
        """The next target token after `prefix`, given the input tokens."""
        if not prefix:
            return self.first_token(tokens, self.gate(tokens[0] if tokens else ""))
        return self.ngram([*tokens, SEP, *prefix])


def _argmax(probs: dict[str, float]) -> str | None:
    return max(probs.items(), key=lambda kv: (kv[1], kv[0]))[0] if probs else None


def _held_out(text: str) -> bool:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 5 == 0


def learn(model: dict, examples: list[dict], seed: int, budget: dict) -> dict:
    data = model if model.get("kind") == "count-lm" else _empty()
    for table in data["counts"].values():
        for followers in table.values():
            for token in followers:
                followers[token] *= DECAY
    pairs = [(e["input"].split(), e["target"].split()) for e in examples]
    trial = Model(json.loads(json.dumps(data)))
    for tokens, target in pairs:
        trial.note_input(tokens)
        if not _held_out(" ".join(tokens)):
            trial.add(tokens, target)
    trial.refresh()
    tallies = data["tallies"]
    for tokens, target in pairs:
        if not _held_out(" ".join(tokens)) or not target:
            continue
        word = tokens[0] if tokens else ""
        for component in COMPONENTS:
            guess = _argmax(trial.first_token(tokens, component))
            tally = tallies.setdefault(word, {}).setdefault(component, [0, 0])
            tally[0] += int(guess == target[0])
            tally[1] += 1
    final = Model(data)
    for tokens, target in pairs:
        final.note_input(tokens)
        final.add(tokens, target)
    return final.data


def score(model: Model, tokens: list[str], target: list[str]) -> float | None:
    """log P(target, then the end | input); None where some token has probability zero."""
    total = 0.0
    for position, token in enumerate([*target, END]):
        p = model.distribution(tokens, target[:position]).get(token, 0.0)
        if p <= 0.0:
            return None
        total += math.log(p)
    return total


def generate(model: Model, tokens: list[str]) -> str:
    """Greedy decoding until the end token (or MAX_TOKENS)."""
    output: list[str] = []
    for _ in range(MAX_TOKENS):
        token = _argmax(model.distribution(tokens, output))
        if token is None or token == END:
            break
        output.append(token)
    return " ".join(output)


def infer(data: dict, requests: list[dict]) -> list[dict]:
    model = Model(data)
    answers = []
    for request in requests:
        tokens = request["input"].split()
        if request["kind"] == "generate":
            answers.append({"id": request["id"], "output": generate(model, tokens)})
        else:
            answers.append(
                {"id": request["id"], "log_probability": score(model, tokens, request["target"].split())}
            )
    return answers


if __name__ == "__main__":
    algorithm_io.run(learn, infer)
