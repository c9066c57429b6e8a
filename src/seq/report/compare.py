"""Compare two finished evals episode by episode: two policies on one benchmark, or one policy on
two versions of a benchmark (a CPU benchmark and its GPU port, say).

The episodes pair up by their item id (task, variation, seed, trial); the result is an ordinary
`Report` whose two arms are the two evals, so every view renders it.
"""

from __future__ import annotations

from dataclasses import replace

from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.store import COMPLETED, GroupKey, Store
from seq.report.analysis import across_tasks, analyse, declared_kinds
from seq.report.eval_report import Report
from seq.stats import check_threshold


def compare_evals(first: str, second: str, threshold: float = 0.05, store: Store | None = None) -> Report:
    """The paired comparison of eval `second` (B) against eval `first` (A)."""
    threshold = check_threshold(threshold)
    store = store or Store()
    rows = []
    for eval_id in (first, second):
        row = store.find_eval(eval_id)  # the id, or a unique prefix of it
        if row is None:
            raise SeqInputError(f"no eval has id {eval_id!r} (seq eval ls lists them).")
        if len(row.manifest.arms) > 1:
            raise SeqInputError(f"eval {row.id} has several arms; its own report compares them.")
        rows.append(row)
    a, b = rows
    labels = [f"A {a.id}", f"B {b.id}"]
    results: list[EpisodeResult] = []
    scores: dict[GroupKey, tuple[dict | None, str | None]] = {}
    for label, row in zip(labels, rows, strict=True):
        results += [replace(e, arm=label) for e in store.episodes(row.id)]
        scores |= {(label, kind, name): value for (_, kind, name), value in store.scores(row.id).items()}
    shared = {e.pair_key for e in results if e.arm == labels[0]} & {
        e.pair_key for e in results if e.arm == labels[1]
    }
    if not shared:
        raise SeqInputError(
            f"evals {a.id} and {b.id} share no episode (task, seed and trial); nothing pairs up."
        )
    analysis = analyse(results, scores, labels, threshold, declared_kinds(a.manifest, b.manifest))
    comparisons = analysis.comparisons
    done = sum(1 for e in results if e.pair_key in shared)
    notes = []
    if a.benchmark != b.benchmark:
        notes.append(
            f"The evals ran different benchmarks ({a.benchmark}, {b.benchmark}): their episodes pair "
            "by task, seed and trial names alone."
        )
    return Report(
        eval_id=f"{a.id} vs {b.id}",
        status=COMPLETED if a.status == b.status == COMPLETED else f"{a.status}/{b.status}",
        policy=f"{a.policy}@v{a.policy_version} vs {b.policy}@v{b.policy_version}",
        benchmark=f"{a.benchmark}@v{a.benchmark_version}"
        + (
            ""
            if (a.benchmark, a.benchmark_version) == (b.benchmark, b.benchmark_version)
            else f" vs {b.benchmark}@v{b.benchmark_version}"
        ),
        done=done,
        total=len(results),
        groups=analysis.groups,
        problems=analysis.problems,
        cost={
            "wall_s": a.wall_s + b.wall_s,
            "core_s": sum(e.cpu_s for e in results) + a.setup_cpu_s + b.setup_cpu_s,
            "episode_s": sum(e.duration_s for e in results),
        },
        manifest=replace(
            a.manifest,
            arms=[
                replace(row.manifest.arms[0], name=label)
                for label, row in zip(labels, rows, strict=True)
                if row.manifest.arms
            ],
        ),
        arguments=replace(
            a.arguments,
            arms=[
                replace(arm, name=label)
                for label, row in zip(labels, rows, strict=True)
                for arm in row.arguments.arms
            ],
            threshold=threshold,
        ),
        compared=[a.manifest, b.manifest],
        compared_evals=[a.id, b.id],
        episodes=results,
        arms=labels,
        comparisons=comparisons,
        across_tasks=across_tasks(results, labels, comparisons[0].comparison.metric) if comparisons else [],
        kinds=analysis.kinds,
        trials=analysis.trials,
        threshold=threshold,
        notes=notes,
    )
