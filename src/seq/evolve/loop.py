"""`seq evolve run`: Evaluate → Diagnose → Generate → Validate → Promote → Report, per cycle.

Every eval goes through `seq.eval.run` into the record (`seq.evolve.evals`); the promoted
conditions become the next version of the benchmark (`seq.evolve.validate`,
`seq.evolve.versions`), which the next cycle evaluates.
"""

from __future__ import annotations

import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from typing import Any

from seq.authoring.benchmark import spec_of
from seq.capture.trace import read_trace
from seq.errors import SeqInputError
from seq.evolve import state as log
from seq.evolve.clusters import FailedEpisode, cluster, features
from seq.evolve.detectors import Baseline, baselines, detect, unavailable
from seq.evolve.evals import Settings, evaluate, identity, profiles
from seq.evolve.evidence import TrialBlocks, estimate_text, span
from seq.evolve.gates import PROMOTE, REVIEW
from seq.evolve.llm import Endpoint
from seq.evolve.operators import generate, supported
from seq.evolve.validate import confirm, episodes_to_estimate, episodes_to_validate, promote, validate
from seq.evolve.versions import all_conditions, evolved_conditions
from seq.record.paths import artifact_file
from seq.record.store import Store, VersionRow
from seq.registry.deploy import load_version, resolve
from seq.stats.exact import fewest_discordant


def _count(n: int, noun: str) -> str:
    """`1 cluster`, `3 clusters`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def diagnose(
    eval_ids: Sequence[str], store: Store
) -> tuple[list[FailedEpisode], dict[str, Baseline], dict[str, str]]:
    """Read the evals' traces, detect each failed episode's failures; and which detectors could
    not judge them, why, and for how many failed episodes (the cycle's log keeps it)."""
    items = {item.item_id: item for eval_id in eval_ids for item in store.items(eval_id)}
    traced = []
    for eval_id in eval_ids:
        for episode in store.episodes(eval_id):
            path = artifact_file(store.path.parent, eval_id, episode.artifacts.get("trace"))
            if path is not None:
                traced.append((episode, read_trace(path)))
    base = baselines([t for _, t in traced])
    failed = []
    unjudged: Counter[tuple[str, str]] = Counter()
    for episode, trace in traced:
        found = detect(trace, base.get(trace.header["task"]))
        if found:
            unjudged.update(unavailable(trace).items())
            item = items[episode.item_id]
            failed.append(
                FailedEpisode(
                    episode.item_id, item.condition.to_dict(), episode.trial, found, features(trace, found)
                )
            )
    reasons: dict[str, list[str]] = {}
    for (name, why), count in sorted(unjudged.items()):
        reasons.setdefault(name, []).append(f"{why} ({count} failed episodes)")
    return failed, base, {name: "; ".join(whys) for name, whys in reasons.items()}


def summarize(found: Any, endpoint: Endpoint | None) -> str | None:
    """A sentence on a failure cluster from the LLM endpoint (None without one or on its timeout)."""
    if endpoint is None:
        return None
    from seq.evolve.llm import Deferred

    try:
        return endpoint.ask(
            "You summarise robot policy failure clusters in one sentence.",
            f"Cluster signature: {found.signature()}; evidence of its first member: "
            f"{found.members[0].failures[0].evidence}.",
        ).strip()[:400]
    except Deferred:
        return None


def _suites(row: VersionRow, settings: Settings) -> tuple[list[str], list[str]]:
    """The suites chosen of the root benchmark, and those evolve added to this version."""
    spec = spec_of(load_version(row))
    chosen = list(settings.suites or [spec.default_suite])
    return chosen, [s for s in evolved_conditions(row) if s not in chosen]


def run_cycle(
    benchmark: str,
    policy: str,
    reference: str,
    settings: Settings,
    store: Store,
    endpoint: Endpoint | None = None,
    say: Any = print,
) -> dict[str, Any]:
    """One cycle from the benchmark's latest evolved version (or `benchmark` as given)."""
    state = log.load(benchmark.partition("@")[0])
    name = state["benchmark"]
    row = resolve("benchmark", state["cycles"][-1]["next"] if state["cycles"] else benchmark, store)
    number = len(state["cycles"]) + 1
    cycle: dict[str, Any] = {
        "cycle": number,
        "base": row.label,
        "policy": policy,
        "reference": reference,
        "started_at": time.time(),
        "thresholds": asdict(settings.thresholds),
        # which trials of a condition chose, gated and re-estimated (seq.evolve.evidence)
        "blocks": {name: [r.start, r.stop] for name, r in TrialBlocks(settings.trials).named().items()},
    }
    say(f"cycle {number}: evaluate {policy} on {row.label}")
    base_suites, evolved_suites = _suites(row, settings)
    run_eval = partial(evaluate, policy, row, settings=settings, trials=settings.trials,
                       params=settings.policy_params, store=store)  # fmt: skip
    cycle["eval_ids"] = [run_eval(base_suites)]
    if evolved_suites:  # exactly the promoted conditions: their own seeds, not the settings' ones
        cycle["eval_ids"].append(run_eval(evolved_suites, narrow=False))
    cycle["eval_id"] = cycle["eval_ids"][0]
    failed, base, cycle["unjudged"] = diagnose(cycle["eval_ids"], store)
    clusters = cluster(failed)
    cycle["failed_episodes"] = len(failed)
    cycle["episodes"] = sum(store.count_items(eval_id) for eval_id in cycle["eval_ids"])
    cycle["clusters"] = [{**c.to_dict(), "summary": summarize(c, endpoint)} for c in clusters]
    say(
        f"  diagnose: {len(failed)} of {cycle['episodes']} episodes failed; "
        f"{_count(len(clusters), 'cluster')}{':' if clusters else ''}"
    )
    if clusters:
        named = ", ".join(f"{c.id} {c.type} ×{len(c.members)}" for c in clusters)
        say(textwrap.fill(named, 80, initial_indent=" " * 4, subsequent_indent=" " * 4))
    existing = all_conditions(row)
    default_steps = spec_of(load_version(row)).max_steps
    candidates = generate(
        clusters,
        supported(load_version(row)),
        {identity(c) for c in existing},
        settings.per_cluster,
        endpoint,
        prefix=f"y{number}c",
        profiles=profiles(cycle["eval_ids"], store),
        least_success=settings.thresholds.drop + settings.thresholds.margin,
        limit=settings.max_candidates,
    )
    operators = ", ".join(sorted({c.operator for c in candidates}))
    say(f"  generate: {_count(len(candidates), 'candidate')}" + (f" ({operators})" if candidates else ""))
    cycle["candidates"] = []
    blocks, t = TrialBlocks(settings.trials), settings.thresholds
    if candidates:
        target_n, reference_n = episodes_to_validate(candidates, settings)
        read = span(blocks.gate)
        say(f"  validate: {target_n} target episodes (read: {read}) and {reference_n} reference …")
        cycle["candidates"] = validate(
            name, row, candidates, cycle, clusters, base, existing, default_steps, settings, store, endpoint
        )
    promoted = [c for c in cycle["candidates"] if c["decision"] == PROMOTE]
    review = [c for c in cycle["candidates"] if c["decision"] == REVIEW]
    say(
        f"  decide: {len(promoted)} promoted, {len(review)} to review, "
        f"{len(cycle['candidates']) - len(promoted) - len(review)} rejected"
        + (f" (one-sided exact test, α {t.alpha:g})" if candidates else "")
    )
    if promoted or review:
        say(
            f"  estimate: {episodes_to_estimate(cycle['candidates'], settings)} target episodes "
            f"(read: {span(blocks.estimate)}) …"
        )
        confirm(name, row, cycle["candidates"], cycle, settings, store)
        for c in promoted + review:
            say(f"    {c['id']} {c['condition']['task']}: drop {estimate_text(c['estimate'])}")
    cycle["next"] = row.label
    if promoted:
        cycle["next"] = promote(name, row, promoted, number, store).label
        say(f"  promote: {_count(len(promoted), 'condition')} → {cycle['next']}")
    cycle["finished_at"] = time.time()
    state["cycles"].append(cycle)
    log.save(state)
    return cycle


def run(
    benchmark: str,
    policy: str,
    reference: str,
    cycles: int = 1,
    settings: Settings | None = None,
    endpoint: Endpoint | None = None,
    store: Store | None = None,
    say: Any = print,
) -> list[dict[str, Any]]:
    """Run `cycles` evolve cycles of `benchmark` against target `policy` and `reference`; returns
    each cycle's log (also kept in `SEQ_HOME/evolve/NAME.json`)."""
    store = store or Store()
    settings = settings or Settings()
    asked = resolve("benchmark", benchmark, store)  # a typo fails now, not after the target's eval:
    cycles_so_far = log.load(benchmark.partition("@")[0])["cycles"]
    latest = cycles_so_far[-1]["next"] if cycles_so_far else asked.label
    if "@" in benchmark and asked.label != latest:  # each cycle continues from the log's latest
        raise SeqInputError(
            f"{benchmark}: {len(cycles_so_far)} evolve cycles have led to {latest}, which the next "
            f"cycle evaluates; give {latest.partition('@')[0]} or {latest}."
        )
    for name in (policy, reference):  # without candidates the reference never runs at all
        resolve("policy", name, store)
    fewest = fewest_discordant(settings.thresholds.alpha)
    if settings.trials < fewest:
        note = (
            f"note: with {settings.trials} trials no candidate can pass the difficulty gate: its "
            f"exact test needs {fewest} or more fresh pairs at α {settings.thresholds.alpha:g}."
        )
        say(textwrap.fill(note, 80, subsequent_indent="  "))
    return [run_cycle(benchmark, policy, reference, settings, store, endpoint, say) for _ in range(cycles)]
