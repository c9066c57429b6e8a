"""The Python twins of `seq evolve status / report / review / diff / prune`."""

from __future__ import annotations

from typing import Any

from seq.errors import SeqInputError
from seq.evolve import state as log
from seq.evolve.evals import evals_of
from seq.evolve.gates import PROMOTE, REVIEW
from seq.record.paths import artifact_file
from seq.record.store import Store


def status(benchmark: str | None = None) -> list[dict[str, Any]]:
    """Per evolved benchmark: cycles, the latest version, promoted and pending candidates."""
    states = [log.only(benchmark)] if benchmark else log.logs()
    out = []
    for state in states:
        cycles = state["cycles"]
        candidates = [c for cycle in cycles for c in cycle.get("candidates", [])]
        out.append(
            {
                "benchmark": state["benchmark"],
                "cycles": len(cycles),
                "latest": cycles[-1]["next"] if cycles else None,
                "candidates": len(candidates),
                "promoted": sum(c["decision"] == PROMOTE for c in candidates),
                "pending_review": sum(c["decision"] == REVIEW for c in candidates),
            }
        )
    return out


def review_list(benchmark: str | None = None) -> list[dict[str, Any]]:
    """Candidates waiting for a person's decision, with why."""
    state = log.only(benchmark)
    return [
        {
            "cycle": cycle["cycle"],
            "id": c["id"],
            "condition": c["condition"],
            "operator": c["operator"],
            "cluster": c["cluster"],
            "reasons": c["reasons"],
            "estimate": c.get("estimate"),  # the drop on trials that neither chose nor judged it
        }
        for cycle in state["cycles"]
        for c in cycle.get("candidates", [])
        if c["decision"] == REVIEW
    ]


def _find(state: dict[str, Any], candidate_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    for cycle in state["cycles"]:
        for candidate in cycle.get("candidates", []):
            if candidate["id"] == candidate_id:
                return cycle, candidate
    raise SeqInputError(f"no candidate {candidate_id!r} in {state['benchmark']}'s evolve log.")


def review_decide(
    candidate_id: str, approve: bool, benchmark: str | None = None, note: str = "", store: Store | None = None
) -> dict[str, Any]:
    """Approve (promote into the benchmark's next version) or reject a candidate under review."""
    from seq.evolve.validate import promote
    from seq.registry.deploy import resolve

    state = log.only(benchmark)
    cycle, candidate = _find(state, candidate_id)
    if candidate["decision"] != REVIEW:
        raise SeqInputError(
            f"candidate {candidate_id} is not under review (it was: {candidate['decision']})."
        )
    candidate["review"] = {"approved": approve, "note": note}
    candidate["decision"] = PROMOTE if approve else "reject"
    if approve:
        store = store or Store()
        latest = resolve("benchmark", state["cycles"][-1]["next"], store)
        row = promote(state["benchmark"], latest, [candidate], cycle["cycle"], store)
        state["cycles"][-1]["next"] = row.label
        candidate["promoted_into"] = row.label
    log.save(state)
    return candidate


def prune(benchmark: str | None = None, keep_cycles: int = 1, store: Store | None = None) -> dict[str, int]:
    """Delete the trace files of all but the last `keep_cycles` cycles' evals; rows stay."""
    if keep_cycles < 0:  # a negative slice bound would delete the first cycles' traces instead
        raise SeqInputError(f"--keep-cycles {keep_cycles}: expected 0 (keep none) or more.")
    store = store or Store()
    states = [log.only(benchmark)] if benchmark else log.logs()
    removed = freed = 0
    for state in states:
        old = state["cycles"][:-keep_cycles] if keep_cycles else state["cycles"]
        for cycle in old:
            evals = [*evals_of(cycle), *cycle.get("validation_evals", {}).values()]
            for eval_id in filter(None, evals):
                for episode in store.episodes(eval_id):
                    # only a file inside the eval's own artifact folder, never one the record names elsewhere
                    path = artifact_file(store.path.parent, eval_id, episode.artifacts.get("trace"))
                    if path is not None:
                        freed += path.stat().st_size
                        path.unlink()
                        removed += 1
    return {"files": removed, "bytes": freed}


def diff(
    first: str, second: str, benchmark: str | None = None, store: Store | None = None
) -> list[dict[str, Any]]:
    """Per task of the evolved slices: the success of evals `first` and `second` (ids or unique
    prefixes; the rows name them by their whole ids) and the paired difference (Agresti–Min) on
    the episodes they share."""
    from seq.stats.paired import agresti_min_interval, paired_table

    store = store or Store()
    rows = []
    outcome = {}
    found = [store.find_eval(text) for text in (first, second)]  # a unique prefix names an eval
    for text, row in zip((first, second), found, strict=True):
        if row is None:
            raise SeqInputError(f"no eval {text!r} in the record (seq eval ls lists them).")
    first, second = (row.id for row in found if row is not None)
    for eval_id in (first, second):
        items = {i.item_id: i.condition for i in store.items(eval_id)}
        outcome[eval_id] = {
            (items[e.item_id].task, f"{items[e.item_id].key}|{items[e.item_id].max_steps}", e.trial): float(
                e.metrics.get("success", 0.0)
            )
            if e.ok
            else 0.0
            for e in store.episodes(eval_id)
            if (items[e.item_id].suite or "").startswith("evolved")
        }
    shared = sorted(set(outcome[first]) & set(outcome[second]))
    for task in sorted({k[0] for k in shared}):
        keys = [k for k in shared if k[0] == task]
        a, b = [outcome[first][k] for k in keys], [outcome[second][k] for k in keys]
        interval = agresti_min_interval(paired_table(a, b))
        rows.append(
            {
                "task": task,
                "pairs": len(keys),
                first: sum(a) / len(a),
                second: sum(b) / len(b),
                "first_success": sum(a) / len(a),
                "second_success": sum(b) / len(b),
                "difference": interval.difference,
                "low": interval.low,
                "high": interval.high,
            }
        )
    return rows
