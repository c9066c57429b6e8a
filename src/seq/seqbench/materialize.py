"""Materializers: fixed probe variants derived from base rows (nonce, counterfactual, noise, proof).

Each derived row keeps `pair_id` = the base row it came from, so control/stress pairs can be formed.

- nonce: in-context entities renamed to fresh nonce tokens never seen in training (`stress`); an
  algorithm that reads its context answers these as well as the base row (`control`).
- counterfactual: from nonce rows, the context is edited so the correct answer changes; following
  the context (not a memorised prior) is what gets these right.
- noise: a copy of the `markov` training rows with a fraction of targets replaced by a wrong token.
- supervision: each `multihop`/`compose` training row with a training-only proof appended to its
  input (`proof p3 q5 r2`), the same final target, one row per source example. Privileged
  supervision: it says whether the algorithm can use a proof, not whether it assigns credit from
  final answers alone.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterable, Iterator
from dataclasses import replace

from seq.seqbench.tasks import TaskRow

NONCE_FAMILIES = ("binding", "multihop", "compose")


class _NonceNames(dict):
    """token → a fresh nonce token (`n` + four letters, never a generated token), made on first use."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng

    def __missing__(self, token: str) -> str:
        while True:
            name = "n" + "".join(self.rng.choice(string.ascii_lowercase) for _ in range(4))
            if name not in self.values():
                self[token] = name
                return name


def _rename(tokens: Iterable[str], names: dict[str, str], renamed: set[str]) -> list[str]:
    return [names[t] if t in renamed else t for t in tokens]


def nonce_rows(rows: Iterable[TaskRow], seed: int) -> Iterator[TaskRow]:
    """Stress copies of the in-context test probes, with their entities renamed per row."""
    rng = random.Random(f"nonce:{seed}")
    for row in rows:
        if row.variant != "base" or row.split != "test" or row.family not in NONCE_FAMILIES:
            continue
        names = _NonceNames(rng)
        if row.family == "binding":
            renamed = {t for pair in row.meta["bindings"] for t in pair} | set(row.candidates)
        elif row.family == "multihop":
            renamed = {t for chain in row.meta["chains"] for t in chain} | set(row.candidates)
        else:
            renamed = {var for var, _ in row.meta["bindings"]}
        meta = dict(row.meta)
        if "bindings" in meta:
            meta["bindings"] = [_rename(pair, names, renamed) for pair in meta["bindings"]]
        if "chains" in meta:
            meta["chains"] = [_rename(chain, names, renamed) for chain in meta["chains"]]
        meta["query"] = _rename([meta["query"]], names, renamed)[0]
        yield replace(
            row,
            id=f"{row.id}:nonce",
            variant="nonce",
            condition="stress",
            pair_id=row.id,
            input=" ".join(_rename(row.input.split(), names, renamed)),
            target=" ".join(_rename(row.target.split(), names, renamed)),
            candidates=tuple(" ".join(_rename(c.split(), names, renamed)) for c in row.candidates),
            meta=meta,
        )


def _counterfactual(row: TaskRow) -> tuple[list[str], str] | None:
    """The edited input tokens and the new answer, or None where no edit changes the answer."""
    tokens = row.input.split()
    query = row.meta["query"]
    ask = tokens.index("?")
    others = [c for c in row.candidates if c != row.target]
    if row.family == "binding":
        last = max(i for i in range(1, ask, 2) if tokens[i] == query)
        tokens[last + 1] = others[0]
        return tokens, others[0]
    if row.family == "multihop":
        middle = next(chain[1] for chain in row.meta["chains"] if chain[0] == query)
        at = next(i for i in range(1, ask - 1) if tokens[i] == middle and tokens[i - 1] in ("chain", ","))
        tokens[at + 1] = others[0]
        return tokens, others[0]
    values = row.meta["values"]
    positions = {tokens[i]: i for i in range(1, ask, 2)}
    key = tokens[positions[query] + 1]
    for var, at in positions.items():
        other = tokens[at + 1]
        if var != query and values.get(other) not in (None, values[key]):
            tokens[positions[query] + 1], tokens[at + 1] = other, key
            return tokens, values[other]
    return None


def counterfactual_rows(rows: Iterable[TaskRow]) -> Iterator[TaskRow]:
    """From nonce rows: the context edited so that the answer changes (pair_id kept)."""
    for row in rows:
        if row.variant != "nonce" or row.family not in NONCE_FAMILIES:
            continue
        edited = _counterfactual(row)
        if edited is None:
            continue
        tokens, answer = edited
        candidates = row.candidates if answer in row.candidates else (*row.candidates, answer)
        yield replace(
            row,
            id=f"{row.pair_id}:counterfactual",
            variant="counterfactual",
            condition="stress",
            input=" ".join(tokens),
            target=answer,
            candidates=candidates,
            meta={**row.meta, "original_target": row.target},
        )


def noise_rows(rows: Iterable[TaskRow], seed: int, rate: float = 0.25) -> Iterator[TaskRow]:
    """The markov training rows, with `rate` of their targets replaced by another token."""
    rng = random.Random(f"noise:{seed}")
    for row in rows:
        if row.variant != "base" or row.split != "train" or row.family != "markov":
            continue
        flipped = rng.random() < rate
        target = rng.choice([c for c in row.candidates if c != row.target]) if flipped else row.target
        yield replace(
            row,
            id=f"{row.id}:noise",
            variant="noise",
            condition="noisy",
            pair_id=row.id,
            target=target,
            meta={**row.meta, "flipped": flipped, "clean_target": row.target},
        )


def _proof(row: TaskRow) -> str:
    if row.family == "multihop":
        chain = next(c for c in row.meta["chains"] if c[0] == row.meta["query"])
        return "proof " + " ".join(chain)
    key = dict(row.meta["bindings"])[row.meta["query"]]
    return f"proof {row.meta['query']} {key} {row.target}"


def supervision_rows(rows: Iterable[TaskRow]) -> Iterator[TaskRow]:
    """One proof-augmented training row per multihop/compose training example, same final target."""
    for row in rows:
        if row.variant != "base" or row.split != "train" or row.family not in ("multihop", "compose"):
            continue
        yield replace(
            row,
            id=f"{row.id}:proof",
            variant="supervision",
            condition="proof",
            pair_id=row.id,
            input=f"{row.input} {_proof(row)}",
            meta={**row.meta, "privileged": "proof"},
        )
