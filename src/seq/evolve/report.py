"""`seq evolve report`: the evolve log as Markdown: per cycle, the clusters, the frontier (the
target's success per task on the base and on the evolved slices, from the cycle's eval in the
record), the candidates by operator and decision, and the promoted conditions with their
evidence."""

from __future__ import annotations

from collections import Counter
from typing import Any

from seq.evolve import state as log
from seq.evolve.evals import evals_of
from seq.evolve.gates import PROMOTE
from seq.record.store import Store


def _pct(value: float | None) -> str:
    return "—" if value is None or value != value else f"{100 * value:.0f}%"


def frontier(eval_ids: list[str], store: Store) -> dict[str, dict[str, tuple[float, int]]]:
    """task → slice ("base" or "evolved") → (the target's success rate, episodes) in a cycle."""
    conditions = {item.item_id: item.condition for eval_id in eval_ids for item in store.items(eval_id)}
    tally: dict[str, dict[str, list[float]]] = {}
    for episode in (e for eval_id in eval_ids for e in store.episodes(eval_id)):
        condition = conditions[episode.item_id]
        part = "evolved" if (condition.suite or "").startswith("evolved") else "base"
        success = float(episode.metrics.get("success", 0.0)) if episode.ok else 0.0
        tally.setdefault(condition.task, {}).setdefault(part, []).append(success)
    return {
        task: {part: (sum(v) / len(v), len(v)) for part, v in parts.items()} for task, parts in tally.items()
    }


def markdown(benchmark: str | None = None, store: Store | None = None) -> str:
    store = store or Store()
    state = log.only(benchmark)
    lines = [f"# seq evolve: {state['benchmark']}", ""]
    for cycle in state["cycles"]:
        t = cycle.get("thresholds", {})
        lines += [
            f"## Cycle {cycle['cycle']}: {cycle['base']} → {cycle['next']}",
            "",
            f"Target `{cycle['policy']}`, reference `{cycle['reference']}`; "
            f"evals {', '.join(f'`{e}`' for e in evals_of(cycle))}; "
            f"{cycle.get('failed_episodes', 0)} failed episodes.",
            f"Gates: drop ≥ {t.get('drop')}, interval above 0; reference ≥ {t.get('solvable')}; "
            f"novelty ≥ {t.get('novelty')}; critics agree.",
            "",
            "| cluster | type | size | conditions | mean step fraction |",
            "|---|---|---|---|---|",
        ]
        for c in cycle.get("clusters", []):
            s = c["signature"]
            lines.append(
                f"| {c['id']} | {c['type']} | {s['size']} | {len(c['conditions'])} | {s['when']:.2f} |"
            )
        lines += [
            "",
            "Frontier (the target's success in this cycle's eval, base vs evolved slices):",
            "",
            "| task | base | evolved |",
            "|---|---|---|",
        ]
        for task, parts in sorted(frontier(evals_of(cycle), store).items()):
            cells = [
                f"{_pct(parts[p][0])} (n {parts[p][1]})" if p in parts else "—" for p in ("base", "evolved")
            ]
            lines.append(f"| {task} | {cells[0]} | {cells[1]} |")
        candidates = cycle.get("candidates", [])
        by = Counter((c["operator"], c["decision"]) for c in candidates)
        lines += ["", "| operator | promote | review | reject |", "|---|---|---|---|"]
        for op in sorted({c["operator"] for c in candidates}):
            lines.append(f"| {op} | {by[(op, 'promote')]} | {by[(op, 'review')]} | {by[(op, 'reject')]} |")
        promoted = [c for c in candidates if c["decision"] == PROMOTE]
        if promoted:
            lines += [
                "",
                "Promoted:",
                "",
                "| candidate | task | change | operator | cluster | target seed → candidate "
                "| drop [95%] | reference |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for c in promoted:
                d = c["difficulty"]
                change = _change(c)
                lines.append(
                    f"| {c['id']} | {c['condition']['task']} | {change} | {c['operator']} | {c['cluster']} "
                    f"({c['cluster_type']}) | {_pct(d['seed_success'])} → {_pct(d['candidate_success'])} | "
                    f"{d['drop']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] | {_pct(c['reference_success'])} |"
                )
        lines.append("")
    return "\n".join(lines)


def _change(candidate: dict[str, Any]) -> str:
    seed, mine = candidate["seed"], candidate["condition"]
    parts = [f"{k}={v}" for k, v in mine["extra"].items() if seed["extra"].get(k) != v and k != "horizon"]
    if mine.get("max_steps") != seed.get("max_steps"):
        parts.append(f"max_steps={mine['max_steps']}")
    return ", ".join(parts) + f" (seed {seed['seed']})"
