"""The synthetic task families: deterministic generators of base rows (no download).

Every family writes space-separated token inputs and targets. Which property each family probes, and
its exact formats, are documented in docs/seqbench.md; the short version:

- `markov` (prediction, length transfer, noise, checkpoint efficiency): windows of a hidden order-2
  chain over `m0..m11`; the target is the rule's next token. `short` windows (6–10 tokens) are trained
  and tested; `long` windows (24–40) are only tested.
- `recall` (retrieval, one-example correction): `fact kX` → `vY` facts learned in training, asked back
  `exact`ly or as a `paraphrase` (`what is kX`); `correction` rows change one fact each, probed as
  `corrected` (the new value) and `retained` (untouched facts).
- `binding` (binding, position transfer): `bind x3 a1 x7 a4 ? x3` → `a1`; bindings are fresh per row,
  a variable may be rebound (the last binding wins); `long` rows have 10–14 bindings.
- `multihop` (multi-hop reasoning, auxiliary supervision): `chain p3 q5 , q5 r2 , … ? p3` → `r2`.
- `compose` (composition): `use x3 k17 x8 k4 ? x3` → the trained fact value of `k17`: an in-context
  binding composed with parametric retrieval.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from seq.seqbench.tasks import TaskRow

MARKOV_TOKENS = 12
RECALL_VALUES = 40
POOL_VALUES = 5  # v0..v4: the values of the keys that compose probes ask for
BINDING_VARS, BINDING_VALUES = 20, 5
HOP_ENTITIES, HOP_ANSWERS = 30, 5


def _row(
    family: str, split: str, condition: str, index: int, text: str, target: str, candidates=(), meta=None
) -> TaskRow:
    row_id = f"{family}-{split}-{condition}-{index:05d}"
    return TaskRow(
        id=row_id,
        family=family,
        split=split,
        condition=condition,
        variant="base",
        pair_id=row_id,
        input=text,
        target=target,
        candidates=tuple(candidates),
        meta=dict(meta or {}),
    )


def _choices(rng: random.Random, target: str, pool: list[str], k: int = 3) -> list[str]:
    """The target and k distractors from `pool`, in a random order."""
    options = [target, *rng.sample([p for p in pool if p != target], k)]
    rng.shuffle(options)
    return options


def _count(base: int, scale: float) -> int:
    return max(4, round(base * scale))


def markov_rows(scale: float, seed: int) -> Iterator[TaskRow]:
    """Windows of an order-2 chain; the target is the rule's next token (the chain follows it 80%)."""
    rng = random.Random(f"markov:{seed}")
    tokens = [f"m{i}" for i in range(MARKOV_TOKENS)]
    rule = {
        (a, b): (rng.randrange(MARKOV_TOKENS), rng.randrange(MARKOV_TOKENS))
        for a in range(MARKOV_TOKENS)
        for b in range(MARKOV_TOKENS)
    }

    def window(length: int) -> tuple[str, str]:
        sequence = [rng.randrange(MARKOV_TOKENS), rng.randrange(MARKOV_TOKENS)]
        while len(sequence) < length:
            primary, secondary = rule[(sequence[-2], sequence[-1])]
            sequence.append(primary if rng.random() < 0.8 else secondary)
        target = rule[(sequence[-2], sequence[-1])][0]
        return " ".join(tokens[t] for t in sequence), tokens[target]

    plan = [
        ("train", "short", 480, (6, 10)),
        ("test", "short", 120, (6, 10)),
        ("test", "long", 120, (24, 40)),
    ]
    for split, condition, base, (low, high) in plan:
        for i in range(_count(base, scale)):
            text, target = window(rng.randint(low, high))
            yield _row("markov", split, condition, i, text, target, _choices(rng, target, tokens))


def recall_facts(scale: float, seed: int) -> dict[str, str]:
    """The fact table `kX → vY`; a fifth of the keys take values from the compose pool v0..v4."""
    rng = random.Random(f"recall:{seed}")
    keys = [f"k{i}" for i in range(_count(160, scale))]
    pool = set(rng.sample(keys, len(keys) // 5))
    return {
        key: f"v{rng.randrange(POOL_VALUES)}"
        if key in pool
        else f"v{rng.randrange(POOL_VALUES, RECALL_VALUES)}"
        for key in keys
    }


def recall_rows(scale: float, seed: int) -> Iterator[TaskRow]:
    """Facts to learn, asked back exactly or paraphrased; corrections of one example each."""
    facts = recall_facts(scale, seed)
    rng = random.Random(f"recall-rows:{seed}")
    values = [f"v{i}" for i in range(RECALL_VALUES)]
    keys = list(facts)
    paraphrase_trained = set(rng.sample(keys, len(keys) // 4))
    for i, key in enumerate(keys):
        yield _row("recall", "train", "fact", i, f"fact {key}", facts[key], _choices(rng, facts[key], values))
    for i, key in enumerate(sorted(paraphrase_trained, key=keys.index)):
        target = facts[key]
        yield _row(
            "recall", "train", "paraphrase", i, f"what is {key}", target, _choices(rng, target, values)
        )
    for i, key in enumerate(rng.sample(keys, len(keys) // 2)):
        yield _row("recall", "test", "exact", i, f"fact {key}", facts[key], _choices(rng, facts[key], values))
    unseen = [k for k in keys if k not in paraphrase_trained]
    for i, key in enumerate(rng.sample(unseen, min(len(unseen), len(keys) // 2))):
        target = facts[key]
        yield _row("recall", "test", "paraphrase", i, f"what is {key}", target, _choices(rng, target, values))
    changed = rng.sample(unseen, max(2, len(keys) // 5))
    kept = rng.sample([k for k in keys if k not in changed], len(changed))
    for i, key in enumerate(changed):
        new = rng.choice([v for v in values[POOL_VALUES:] if v != facts[key]])
        options = [new, facts[key], *rng.sample([v for v in values if v not in (new, facts[key])], 2)]
        rng.shuffle(options)
        meta = {"previous": facts[key]}
        yield _row("recall", "correction", "update", i, f"fact {key}", new, options, meta)
        yield _row("recall", "test", "corrected", i, f"fact {key}", new, options, meta)
    for i, key in enumerate(kept):
        yield _row(
            "recall", "test", "retained", i, f"fact {key}", facts[key], _choices(rng, facts[key], values)
        )


def binding_input(bindings: list[tuple[str, str]], query: str) -> str:
    """`bind x3 a1 x7 a4 ? x3`."""
    return "bind " + " ".join(f"{var} {value}" for var, value in bindings) + f" ? {query}"


def binding_rows(scale: float, seed: int) -> Iterator[TaskRow]:
    """Fresh variable bindings in context; the query's last binding is the answer."""
    rng = random.Random(f"binding:{seed}")
    variables = [f"x{i}" for i in range(BINDING_VARS)]
    values = [f"a{i}" for i in range(BINDING_VALUES)]

    def example(count: int) -> tuple[list[tuple[str, str]], str, str]:
        bindings = [(var, rng.choice(values)) for var in rng.sample(variables, count)]
        query_at = rng.randrange(count)
        query = bindings[query_at][0]
        if rng.random() < 0.3:
            rebound = rng.choice([v for v in values if v != bindings[query_at][1]])
            bindings.insert(rng.randint(query_at + 1, len(bindings)), (query, rebound))
        answer = [value for var, value in bindings if var == query][-1]
        return bindings, query, answer

    plan = [("train", "short", 320, (3, 5)), ("test", "short", 120, (3, 5)), ("test", "long", 120, (10, 14))]
    for split, condition, base, (low, high) in plan:
        for i in range(_count(base, scale)):
            bindings, query, answer = example(rng.randint(low, high))
            meta = {"bindings": bindings, "query": query}
            text = binding_input(bindings, query)
            yield _row("binding", split, condition, i, text, answer, _choices(rng, answer, values), meta)


def multihop_input(chains: list[list[str]], query: str, rng: random.Random) -> str:
    """`chain p3 q5 , q5 r2 , … ? p3` with the two links of every chain shuffled among the others."""
    links = [f"{a} {b}" for chain in chains for a, b in zip(chain, chain[1:], strict=False)]
    rng.shuffle(links)
    return "chain " + " , ".join(links) + f" ? {query}"


def multihop_rows(scale: float, seed: int) -> Iterator[TaskRow]:
    """Two-hop chains given in context; the answer is the end of the queried chain."""
    rng = random.Random(f"multihop:{seed}")
    answers = [f"r{i}" for i in range(HOP_ANSWERS)]
    for split, base in (("train", 320), ("test", 120)):
        for i in range(_count(base, scale)):
            count = rng.randint(2, 3)
            starts = rng.sample(range(HOP_ENTITIES), count)
            middles = rng.sample(range(HOP_ENTITIES), count)
            chains = [[f"p{s}", f"q{m}", rng.choice(answers)] for s, m in zip(starts, middles, strict=True)]
            chosen = rng.choice(chains)
            text = multihop_input(chains, chosen[0], rng)
            meta = {"chains": chains, "query": chosen[0]}
            condition = "two_hop"
            yield _row(
                "multihop", split, condition, i, text, chosen[2], _choices(rng, chosen[2], answers), meta
            )


def compose_input(bindings: list[tuple[str, str]], query: str) -> str:
    """`use x3 k17 x8 k4 ? x3`."""
    return "use " + " ".join(f"{var} {key}" for var, key in bindings) + f" ? {query}"


def compose_rows(scale: float, seed: int) -> Iterator[TaskRow]:
    """A variable bound in context to a key whose value was learned as a fact."""
    facts = recall_facts(scale, seed)
    rng = random.Random(f"compose:{seed}")
    pool_keys = [k for k, v in facts.items() if int(v[1:]) < POOL_VALUES]
    variables = [f"x{i}" for i in range(BINDING_VARS)]
    pool_values = [f"v{i}" for i in range(POOL_VALUES)]
    for split, base in (("train", 240), ("test", 120)):
        for i in range(_count(base, scale)):
            count = rng.randint(2, 4)
            keys = rng.sample(list(facts), count - 1) + [rng.choice(pool_keys)]
            rng.shuffle(keys)
            bindings = list(zip(rng.sample(variables, count), keys, strict=True))
            query, key = next((var, k) for var, k in bindings if k in pool_keys)
            target = facts[key]
            meta = {"bindings": bindings, "query": query, "values": {k: facts[k] for k in keys}}
            text = compose_input(bindings, query)
            yield _row("compose", split, "bound", i, text, target, _choices(rng, target, pool_values), meta)


GENERATORS = {
    "markov": markov_rows,
    "recall": recall_rows,
    "binding": binding_rows,
    "multihop": multihop_rows,
    "compose": compose_rows,
}


def base_rows(scale: float = 1.0, seed: int = 0) -> Iterator[TaskRow]:
    """Every family's base rows, family after family, deterministic in (scale, seed)."""
    for generate in GENERATORS.values():
        yield from generate(scale, seed)


def oracle_rows(rows: list[TaskRow]) -> Iterator[TaskRow]:
    """Test probes with the missing knowledge supplied in the input: an upper bound, for diagnosis."""
    facts = {r.input.split()[1]: r.target for r in rows if r.family == "recall" and r.condition == "fact"}
    for row in rows:
        if row.split != "test" or row.variant != "base":
            continue
        text = None
        if row.family == "recall" and row.condition == "paraphrase":
            key = row.input.split()[-1]
            text = f"given {key} {facts.get(key, row.target)} {row.input}"
        elif row.family == "multihop":
            chain = next(c for c in row.meta["chains"] if c[0] == row.meta["query"])
            text = f"{row.input} via {chain[1]}"
        elif row.family == "compose":
            key = dict(row.meta["bindings"])[row.meta["query"]]
            text = f"{row.input} {key}"
        if text is not None:
            yield TaskRow(
                id=f"{row.id}:oracle",
                family=row.family,
                split="test",
                condition="oracle",
                variant="oracle",
                pair_id=row.id,
                input=text,
                target=row.target,
                candidates=row.candidates,
                meta=row.meta,
            )
