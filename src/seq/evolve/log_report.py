"""`seq evolve report`: the evolve log as Markdown (the HTML view is `seq.evolve.report_html`).

Both views render one set of numbers, `cycle_view`: per cycle, the clusters, the frontier (the
target's success per task on the base and on the evolved slices, from the cycle's eval in the
record, with Wilson intervals), the candidates by operator and decision, and the promoted
conditions with their evidence; and `heatmap_rows`, each task's success per model and version.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from seq.evolve import state as log
from seq.evolve.evals import evals_of
from seq.evolve.evidence import span
from seq.evolve.gates import PROMOTE
from seq.record.store import Store
from seq.stats.intervals import wilson_interval

SLICES = ("base", "evolved")
NO_EVOLVED_SLICE = (
    "No evolved slice in this cycle's eval: the next cycle evaluates what this one promotes "
    "(--cycles 2 or more)."
)


def _pct(value: float | None) -> str:
    return "—" if value is None or value != value else f"{100 * value:.0f}%"


def _tally(
    eval_ids: list[str], store: Store, suite: str | None = None, trials: list[int] | None = None
) -> dict[str, dict[str, list[float]]]:
    """task → slice ("base" or "evolved") → each episode's success, over `eval_ids`; only the
    conditions of suites named `suite…` and the trials in [`trials[0]`, `trials[1]`) where given."""
    conditions = {item.item_id: item.condition for eval_id in eval_ids for item in store.items(eval_id)}
    tally: dict[str, dict[str, list[float]]] = {}
    for episode in (e for eval_id in eval_ids for e in store.episodes(eval_id)):
        condition = conditions[episode.item_id]
        if suite is not None and not (condition.suite or "").startswith(suite):
            continue
        if trials is not None and not trials[0] <= episode.trial < trials[1]:
            continue
        part = "evolved" if (condition.suite or "").startswith("evolved") else "base"
        success = float(episode.metrics.get("success", 0.0)) if episode.ok else 0.0
        tally.setdefault(condition.task, {}).setdefault(part, []).append(success)
    return tally


def _success(values: list[float]) -> dict[str, Any]:
    """The success rate of episodes' 0/1 outcomes, with n and its 95% Wilson interval."""
    interval = wilson_interval(round(sum(values)), len(values))
    rate = sum(values) / len(values)
    return {"success": rate, "n": len(values), "low": interval.low, "high": interval.high}


def frontier_rows(cycle: dict[str, Any], store: Store) -> list[dict[str, Any]]:
    """The cycle's frontier as rows: task, slice, success, episodes and its 95% Wilson interval."""
    rows = []
    for task, parts in sorted(_tally(evals_of(cycle), store).items()):
        for part in SLICES:
            if part in parts:
                rows.append({"cycle": cycle["cycle"], "task": task, "slice": part, **_success(parts[part])})
    return rows


def heatmap_rows(state: dict[str, Any], store: Store) -> list[dict[str, Any]]:
    """Task × model: the success of the target on each cycle's version, and of the target and the
    reference on each cycle's candidates (the staging version; the target on the gate's fresh
    trials), one row per task and column, with its 95% Wilson interval (the episodes pooled over
    the column's conditions)."""
    rows = []
    for cycle in state["cycles"]:
        validation = cycle.get("validation_evals", {})
        gate = (cycle.get("blocks") or {}).get("gate")
        candidates = "candidates-" if gate else None  # a log from before held no seeds there
        label = f"candidates y{cycle['cycle']}"
        columns = [
            (f"target · {cycle['base']}", "target", evals_of(cycle), None, None),
            (f"target · {label}", "target", [validation.get("target")], candidates, gate),
            (f"reference · {label}", "reference", [validation.get("reference")], None, None),
        ]
        for column, model, eval_ids, suite, trials in columns:
            eval_ids = [e for e in eval_ids if e]
            for task, parts in sorted(_tally(eval_ids, store, suite, trials).items()):
                rows.append(
                    {
                        "cycle": cycle["cycle"],
                        "column": column,
                        "model": cycle["policy"] if model == "target" else cycle["reference"],
                        "task": task,
                        **_success([v for part in parts.values() for v in part]),
                    }
                )
    return rows


def change(candidate: dict[str, Any]) -> str:
    """What a candidate changed from its seed condition, in words."""
    seed, mine = candidate["seed"], candidate["condition"]
    parts = [f"{k}={v}" for k, v in mine["extra"].items() if seed["extra"].get(k) != v and k != "horizon"]
    if mine.get("max_steps") != seed.get("max_steps"):
        parts.append(f"max_steps={mine['max_steps']}")
    return ", ".join(parts) + f" (seed {seed['seed']})"


def promoted_rows(cycle: dict[str, Any]) -> list[dict[str, Any]]:
    """The cycle's promoted candidates with the evidence that promoted them: the gate's exact
    test on fresh trials, and the drop re-estimated on trials that neither chose nor promoted
    them (`fresh`: False for a log from before, whose drop is the selection-time one)."""
    rows = []
    for c in cycle.get("candidates", []):
        if c["decision"] != PROMOTE:
            continue
        hard = c["difficulty"]
        shown = c.get("estimate") or hard
        solvability = (c.get("critics") or {}).get("solvability") or {}
        rows.append(
            {
                "id": c["id"],
                "task": c["condition"]["task"],
                "change": change(c),
                "operator": c["operator"],
                "cluster": f"{c['cluster']} ({c['cluster_type']})",
                "gate_p": hard.get("p_value"),
                "gate_pairs": hard.get("pairs"),
                "gate_test": hard.get("test"),
                "alpha": hard.get("alpha"),
                "fresh": "estimate" in c,
                "trials": shown.get("trials"),
                "seed_success": shown["seed_success"],
                "candidate_success": shown["candidate_success"],
                "drop": shown["drop"],
                "low": shown["low"],
                "high": shown["high"],
                "pairs": shown.get("pairs"),
                "method": shown.get("method"),
                "selection_seed_success": (c.get("selection") or {}).get("seed_success"),
                "reference_success": c["reference_success"],
                "reference_episodes": solvability.get("episodes"),
                "reference_distinct": solvability.get("distinct"),
                "reference_spare": solvability.get("spare"),
                "reference_thin": bool(solvability.get("thin")),
                "novelty": c.get("novelty"),
                "critics": {name: v.get("verdict") for name, v in (c.get("critics") or {}).items()},
            }
        )
    return rows


def drop_text(row: dict[str, Any]) -> str:
    """`+0.40 [+0.02, +0.65] (n 10)`: a promoted candidate's drop re-estimated on fresh trials,
    its 95% interval and its pairs (`… at selection` for a log from before, which had none)."""
    n = f" (n {row['pairs']})" if row.get("pairs") is not None else ""
    text = f"{row['drop']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]{n}"
    return text if row.get("fresh", True) else text + " at selection"


def gate_text(row: dict[str, Any]) -> str:
    """`p 0.031 (n 10)`: the gate's one-sided exact p-value and its fresh pairs ("—" before)."""
    if row.get("gate_p") is None:
        return "—"
    return f"p {row['gate_p']:.2g} (n {row['gate_pairs']})"


def reference_text(row: dict[str, Any]) -> str:
    """`100% (n 2)`: the reference's success on a promoted candidate and its episodes; with how
    many distinct outcomes they were where fewer (`n 2, 1 outcome`), and the steps its one
    outcome left of the step limit where few (`4 steps to spare`)."""
    parts = [f"n {row['reference_episodes']}"] if row.get("reference_episodes") is not None else []
    distinct = row.get("reference_distinct")
    if distinct is not None and distinct < (row.get("reference_episodes") or 0):
        parts.append(f"{distinct} outcome{'' if distinct == 1 else 's'}")
    if row.get("reference_thin"):
        parts.append(f"{row['reference_spare']} steps to spare")
    return _pct(row["reference_success"]) + (f" ({', '.join(parts)})" if parts else "")


def promoted_caption(view: dict[str, Any]) -> str:
    """What the promoted table's numbers rest on: which trials gated, which re-estimated."""
    blocks = view.get("blocks")
    if not blocks:
        return "Promoted (the drop as measured on the trials that chose the candidate):"
    gate, again = (range(*blocks[name]) for name in ("gate", "estimate"))
    return (
        f"Promoted (gate: the one-sided exact test on fresh {span(gate)}; the rates and the drop, "
        f"with Tango's 95% interval, re-estimated on {span(again)}, which neither chose nor "
        "promoted them):"
    )


def gates_text(thresholds: dict[str, Any]) -> str:
    """The gates a cycle applied, in one line."""
    t = thresholds
    if t.get("alpha") is None:  # a log from before the exact test
        difficulty = f"drop ≥ {t.get('drop')}, interval above 0"
    else:
        difficulty = f"drop ≥ {t.get('drop')} on fresh trials, one-sided exact McNemar p ≤ {t['alpha']:g}"
    return (
        f"Gates: {difficulty}; reference ≥ {t.get('solvable')}; novelty ≥ {t.get('novelty')}; critics agree."
    )


def _episodes(eval_ids: list[str], store: Store) -> int | None:
    """The target's episodes in the cycle's evals (for a log written before the loop kept it)."""
    if not eval_ids or any(store.get_eval(eval_id) is None for eval_id in eval_ids):
        return None
    return sum(store.count_items(eval_id) for eval_id in eval_ids)


def rejected_by(candidates: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """Each gate or critic that rejected candidates, with how many (a candidate can fail
    several), most first: why a cycle promoted nothing."""
    gates = Counter(
        reason.partition(":")[0]
        for c in candidates
        if c["decision"] == "reject"
        for reason in c.get("reasons", [])
    )
    return sorted(gates.items(), key=lambda kv: (-kv[1], kv[0]))


def failed_text(view: dict[str, Any]) -> str:
    """`3 of 16 episodes failed` (`3 failed episodes` where the log has no total)."""
    if view.get("episodes"):
        return f"{view['failed_episodes']} of {view['episodes']} episodes failed"
    return f"{view['failed_episodes']} failed episodes"


def no_candidates_text(view: dict[str, Any]) -> str:
    """Why a cycle generated no candidate."""
    if not view["clusters"]:
        return "No candidates: no failure cluster (DBSCAN needs 2 or more similar failed episodes)."
    t = view["thresholds"]
    least = (t.get("drop") or 0.0) + (t.get("margin") or 0.0)
    return (
        f"No candidates: no cluster has a condition the target succeeds on at least {least:.0%} "
        "of the time to mutate (so that a drop can show), or its variants exist already."
    )


def unjudged_text(view: dict[str, Any]) -> str:
    """`Not judged: instruction_mismatch — the benchmark exposes no instruction (…).`: the
    detectors that could not look at this cycle's failures, so that their silence is not read
    as "none found"; "" when every detector could."""
    if not view["unjudged"]:
        return ""
    return "Not judged: " + "; ".join(f"{name} — {why}" for name, why in view["unjudged"].items()) + "."


def rejected_text(view: dict[str, Any]) -> str:
    """`Rejected by: difficulty ×5, robustness critic ×1.`, or "" when none was rejected."""
    if not view["rejected_by"]:
        return ""
    return "Rejected by: " + ", ".join(f"{gate} ×{n}" for gate, n in view["rejected_by"]) + "."


def cycle_view(cycle: dict[str, Any], store: Store) -> dict[str, Any]:
    """Everything the report shows of one cycle, as numbers (both views render this)."""
    candidates = cycle.get("candidates", [])
    by = Counter((c["operator"], c["decision"]) for c in candidates)
    return {
        "cycle": cycle["cycle"],
        "base": cycle["base"],
        "next": cycle["next"],
        "policy": cycle["policy"],
        "reference": cycle["reference"],
        "evals": evals_of(cycle),
        "failed_episodes": cycle.get("failed_episodes", 0),
        "episodes": cycle.get("episodes") or _episodes(cycle.get("eval_ids", []), store),
        "rejected_by": rejected_by(candidates),
        "unjudged": dict(sorted((cycle.get("unjudged") or {}).items())),
        "thresholds": cycle.get("thresholds", {}),
        "blocks": cycle.get("blocks"),
        "clusters": [
            {
                "id": c["id"],
                "type": c["type"],
                "size": c["signature"]["size"],
                "conditions": len(c["conditions"]),
                "when": c["signature"]["when"],
                "summary": c.get("summary"),
            }
            for c in cycle.get("clusters", [])
        ],
        "frontier": frontier_rows(cycle, store),
        "operators": [
            {"operator": op, **{d: by[(op, d)] for d in ("promote", "review", "reject")}}
            for op in sorted({c["operator"] for c in candidates})
        ],
        "promoted": promoted_rows(cycle),
        "fresh": fresh_rows(cycle),
    }


def fresh_rows(cycle: dict[str, Any]) -> list[dict[str, Any]]:
    """Every candidate judged, with the target's rates and drop on the gate's fresh trials (the
    seed and the candidate on the same trials, paired), its exact test, the decision, and for
    those promoted or sent to review the drop re-estimated on the next block of trials. A
    rejected candidate's drop is shown too: the table is every candidate, not the ones chosen."""
    rows = []
    for c in cycle.get("candidates", []):
        hard, again = c["difficulty"], c.get("estimate")
        semantic = (c.get("critics") or {}).get("semantic") or {}
        rows.append(
            {
                "id": c["id"],
                "task": c["condition"]["task"],
                "change": change(c),
                "operator": c["operator"],
                "decision": c["decision"],
                "trials": hard.get("trials"),
                "seed_success": hard.get("seed_success"),
                "candidate_success": hard.get("candidate_success"),
                "drop": hard.get("drop"),
                "pairs": hard.get("pairs"),
                "seed_only": hard.get("seed_only"),
                "candidate_only": hard.get("candidate_only"),
                "p_value": hard.get("p_value"),
                "estimate": None
                if again is None
                else {k: again.get(k) for k in ("drop", "low", "high", "pairs")},
                "reference_success": c.get("reference_success"),
                "semantic": semantic.get("verdict"),
                "semantic_judged": semantic.get("judged"),
            }
        )
    return rows


FRESH_COLUMNS = ("candidate judged", "task", "change", "operator", "drop on fresh trials", "re-estimated",
                 "reference", "semantic", "decision")  # fmt: skip


def fresh_caption(view: dict[str, Any]) -> str:
    """What the every-candidate table's numbers rest on."""
    blocks = view.get("blocks") or {}
    where = f" ({span(range(*blocks['gate']))})" if blocks.get("gate") else ""
    return (
        f"Every candidate on the gate's fresh trials{where}, the seed and the candidate paired by "
        "trial; re-estimated on the next block where promoted or sent to review:"
    )


def fresh_cells(view: dict[str, Any]) -> list[list[str]]:
    """The every-candidate table's cells (`FRESH_COLUMNS`), as both views show them."""
    out = []
    for f in view.get("fresh") or []:
        again = f["estimate"]
        judged = f"{f['semantic']} ({f['semantic_judged']})" if f.get("semantic_judged") else f["semantic"]
        out.append(
            [
                f["id"],
                f["task"],
                f["change"],
                f["operator"],
                fresh_text(f),
                drop_text({**again, "fresh": True}) if again else "—",
                _pct(f["reference_success"]),
                judged or "—",
                f["decision"],
            ]
        )
    return out


def fresh_text(row: dict[str, Any]) -> str:
    """`+0.50 (83% → 33%, n 6: 3 seed-only, 0 candidate-only, p 0.12)`: a candidate's drop on
    the gate's fresh trials."""
    if row.get("drop") is None or row.get("pairs") in (None, 0):
        return "no fresh pairs"
    return (
        f"{row['drop']:+.2f} ({_pct(row['seed_success'])} → {_pct(row['candidate_success'])}, "
        f"n {row['pairs']}: "
        f"{row['seed_only']} seed-only, {row['candidate_only']} candidate-only, p {row['p_value']:.2g})"
    )


def report_data(benchmark: str | None = None, store: Store | None = None) -> dict[str, Any]:
    """The report's numbers: the benchmark, each cycle's view and the task × model heatmap."""
    store = store or Store()
    state = log.only(benchmark)
    return {
        "benchmark": state["benchmark"],
        "cycles": [cycle_view(cycle, store) for cycle in state["cycles"]],
        "heatmap": heatmap_rows(state, store),
    }


def _finite(value: Any) -> Any:
    """NaN (a rate of no episodes) as null, so that the JSON is JSON."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def report_json(benchmark: str | None = None, store: Store | None = None) -> str:
    """The report's numbers (`report_data`) as JSON: what the Markdown and HTML views render."""
    import json

    return json.dumps(_finite(report_data(benchmark, store)), indent=1, default=str)


def interval_text(row: dict[str, Any]) -> str:
    """`85% [62%, 95%] (n 20)`: a frontier cell."""
    return f"{_pct(row['success'])} [{_pct(row['low'])}, {_pct(row['high'])}] (n {row['n']})"


def markdown(benchmark: str | None = None, store: Store | None = None) -> str:
    """The evolve log as Markdown."""
    data = report_data(benchmark, store)
    lines = [f"# seq evolve: {data['benchmark']}", ""]
    for view in data["cycles"]:
        t = view["thresholds"]
        lines += [
            f"## Cycle {view['cycle']}: {view['base']} → {view['next']}",
            "",
            f"Target `{view['policy']}`, reference `{view['reference']}`; "
            f"evals {', '.join(f'`{e}`' for e in view['evals'])}; "
            f"{failed_text(view)}.",
            gates_text(t),
            "",
        ]
        if unjudged_text(view):
            lines += [unjudged_text(view), ""]
        if view["clusters"]:
            lines += ["| cluster | type | size | conditions | mean step fraction |", "|---|---|---|---|---|"]
        else:
            lines.append("No failure cluster.")
        for c in view["clusters"]:
            lines.append(f"| {c['id']} | {c['type']} | {c['size']} | {c['conditions']} | {c['when']:.2f} |")
        lines += [
            "",
            "Frontier (the target's success in this cycle's eval, base vs evolved slices, "
            "95% Wilson intervals):",
            "",
            "| task | base | evolved |",
            "|---|---|---|",
        ]
        by_task: dict[str, dict[str, dict[str, Any]]] = {}
        for row in view["frontier"]:
            by_task.setdefault(row["task"], {})[row["slice"]] = row
        for task, parts in by_task.items():
            cells = [interval_text(parts[p]) if p in parts else "—" for p in SLICES]
            lines.append(f"| {task} | {cells[0]} | {cells[1]} |")
        if not any(row["slice"] == "evolved" for row in view["frontier"]):
            lines += ["", NO_EVOLVED_SLICE]
        if not view["operators"]:
            lines += ["", no_candidates_text(view)]
        else:
            lines += ["", "| operator | promote | review | reject |", "|---|---|---|---|"]
        for op in view["operators"]:
            lines.append(f"| {op['operator']} | {op['promote']} | {op['review']} | {op['reject']} |")
        if rejected_text(view):
            lines += ["", rejected_text(view)]
        if view.get("fresh"):
            lines += ["", fresh_caption(view), "", "| " + " | ".join(FRESH_COLUMNS) + " |"]
            lines.append("|" + "---|" * len(FRESH_COLUMNS))
            lines += ["| " + " | ".join(cells) + " |" for cells in fresh_cells(view)]
        if view["promoted"]:
            lines += [
                "",
                promoted_caption(view),
                "",
                "| candidate | task | change | operator | cluster | gate "
                "| target seed → candidate | drop [95%] | reference |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            for p in view["promoted"]:
                lines.append(
                    f"| {p['id']} | {p['task']} | {p['change']} | {p['operator']} | {p['cluster']} | "
                    f"{gate_text(p)} | {_pct(p['seed_success'])} → {_pct(p['candidate_success'])} | "
                    f"{drop_text(p)} | {reference_text(p)} |"
                )
        lines.append("")
    return "\n".join(lines)
