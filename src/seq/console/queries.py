"""What the console's lists read from the record, each page in a fixed number of queries (never
one per eval or per episode): evals with their live status, counts and primary metric so far, a
page of an eval's episodes, one episode.

The console only reads: it opens the record read-only (`mode=ro`). An eval's full report is
`seq.report`'s; these are the figures a list needs, computed in SQL.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seq.record.episode import ERROR, INFRASTRUCTURE, EpisodeResult, condition_key, pair_key
from seq.record.lease import LeaseRow, this_process
from seq.record.schema import columns, select
from seq.record.states import EpisodeStatus
from seq.record.store import INTERRUPTED, LAST_ATTEMPT, RUNNING, episode_from_row
from seq.report.analysis import BUILT_IN_METRICS
from seq.stats import clustered_interval, wilson_interval

# An episode row (aliased `e`) that is its item's result, as `Store.episodes` counts them.
# (Only an eval with a retried item needs the per-row test of the last attempt.)
RESULT = (
    f"e.failure IS NOT '{INFRASTRUCTURE}' AND (e.eval_id NOT IN "
    f"(SELECT eval_id FROM episodes WHERE attempt > 1) OR {LAST_ATTEMPT})"
)


def metric_at(path: str) -> str:
    """SQL for the value at JSON `path` (an SQL expression) of an episode's (`e`) metrics: SQLite's
    `json_extract`, or, for metrics that are not strict JSON (Python's json writes a NaN or an
    infinite reward as `NaN`, `Infinity`), `seq_metric`, which reads them in Python."""
    return (
        f"CASE WHEN json_valid(e.metrics) THEN json_extract(e.metrics, {path}) "
        f"ELSE seq_metric(e.metrics, {path}) END"
    )


def _metric(metrics: str, path: str) -> float | int | str | None:
    """`seq_metric`: the value at `path` (`$.name` or `$."name"`) of `metrics` as Python's json
    reads it; None for a value that is missing, not a number, NaN or infinite (as SQLite's JSON
    functions would have no such value)."""
    name = path.removeprefix("$.")
    try:
        name = json.loads(name) if name.startswith('"') else name
        value = json.loads(metrics).get(name)
    except (ValueError, AttributeError):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if isinstance(value, (int, float, str)) else None


SUCCESS = metric_at("'$.success'")
OUTCOMES = {  # the episode filters of an eval's page: SQL over its result rows
    "all": "1",
    "success": f"e.status != '{EpisodeStatus.ERROR}' AND {SUCCESS} >= 0.5",
    "fail": f"e.status = '{EpisodeStatus.OK}' AND {SUCCESS} < 0.5",
    "error": f"e.status = '{EpisodeStatus.ERROR}'",
    "timed_out": f"e.status = '{EpisodeStatus.TIMED_OUT}'",
}


@dataclass
class ArmFigure:
    """One arm's primary metric over its episodes so far: value, 95% interval (Wilson for a rate,
    the bootstrap for a mean; at the effective n where trials repeat conditions), n."""

    arm: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    kind: str = "rate"


@dataclass
class EvalSummary:
    """One eval as the evals list and a benchmark's page show it."""

    id: str
    created_at: float
    status: str
    policy: str
    benchmark: str
    benchmark_version: int
    arms: list[str]
    policies: list[str]
    wall_s: float
    error: str | None
    done: int = 0
    errors: int = 0
    total: int = 0
    metric: str | None = None
    figures: list[ArmFigure] = field(default_factory=list)
    declared: dict[str, str] = field(default_factory=dict)


class RecordReader:
    """A read-only connection to the record at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.db.row_factory = sqlite3.Row
        self.db.create_function("seq_metric", 2, _metric, deterministic=True)
        self.queries = 0  # statements run: what bench/ui.py reads to show there is no N+1
        self._tallies: tuple[tuple[Any, ...], Any] | None = None

    def execute(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        self.queries += 1
        return self.db.execute(sql, tuple(args)).fetchall()

    def close(self) -> None:
        self.db.close()

    # -- evals --------------------------------------------------------------------------------
    def evals(
        self, benchmark: str | None = None, policy: str | None = None, status: str | None = None
    ) -> list[EvalSummary]:
        """Evals, newest first, with live status, episodes done of the total and each arm's
        primary metric so far (a rate with its interval; a mean without, which would read every
        value); filtered by benchmark name, a policy any arm ran, and status."""
        query, args = select("evals"), []
        if benchmark:
            query += " WHERE benchmark = ?"
            args.append(benchmark)
        rows = self.execute(query + " ORDER BY created_at DESC", args)
        live = self._live_evals()
        found = []
        for row in rows:
            summary = _summary(row, live)
            if policy and policy not in summary.policies:
                continue
            if status and summary.status != status:
                continue
            found.append(summary)
        self._add_tallies(found)
        repeated = [e for e in found if any(f.kind == "rate" and f.low is None for f in e.figures)]
        if repeated:  # rates whose trials repeat conditions: one query for all of them
            self._mean_intervals(repeated)
        return found

    def benchmarks(self) -> list[sqlite3.Row]:
        """Each benchmark with evals: its name, how many evals and versions."""
        return self.execute(
            "SELECT benchmark AS name, COUNT(*) AS evals, COUNT(DISTINCT benchmark_version) AS versions, "
            "MAX(created_at) AS last FROM evals GROUP BY benchmark ORDER BY benchmark"
        )

    def trend(self, benchmark: str) -> list[EvalSummary]:
        """A benchmark's evals, oldest version first, each with its primary metric's interval
        (for a mean, the BCa bootstrap of its values, read for these evals only)."""
        rows = self.execute(
            select("evals") + " WHERE benchmark = ? ORDER BY benchmark_version, created_at", [benchmark]
        )
        live = self._live_evals()
        found = [_summary(row, live) for row in rows]
        self._add_tallies(found)
        means = [e for e in found if any(f.value is not None and f.low is None for f in e.figures)]
        if means:
            self._mean_intervals(means)
        return found

    def _live_evals(self) -> set[str]:
        """The evals a live runner holds (every lease read in one query)."""
        here = this_process()
        leases = [LeaseRow(*row) for row in self.execute(select("leases"))]
        return {lease.eval_id for lease in leases if lease.alive(here)}

    def _add_tallies(self, evals: list[EvalSummary]) -> None:
        """Totals, results, errors and each arm's primary metric of every eval listed, from the
        record's tallies (three queries over all evals, run again only when episodes changed)."""
        metrics, tallies, totals, repeated = self.tallies()
        for summary in evals:
            summary.total = totals.get(summary.id, 0)
            summary.metric = metrics.get(summary.id)
            order = {arm: index for index, arm in enumerate(summary.arms)}
            for arm, (done, errors, n, total, non_binary, _) in sorted(
                tallies.get(summary.id, {}).items(), key=lambda item: order.get(item[0], len(order))
            ):
                summary.done += done
                summary.errors += errors
                if not n:
                    continue
                kind = summary.declared.get(summary.metric or "") or ("rate" if non_binary == 0 else "mean")
                figure = ArmFigure(arm, n=n, kind=kind if non_binary == 0 else "mean")
                if figure.kind == "rate" and summary.id not in repeated:
                    interval = wilson_interval(int(total), n)
                    figure.value, figure.low, figure.high = interval.mean, interval.low, interval.high
                else:  # a mean, or trials that repeat conditions: from the values (`_value_intervals`)
                    figure.value = total / n
                summary.figures.append(figure)

    def tallies(self) -> tuple[dict[str, str], dict[str, dict[str, tuple]], dict[str, int], set[str]]:
        """Each eval's primary metric (its first own metric), per eval and arm (results, errors,
        values, their sum, values other than 0 or 1), each eval's work items, and the evals that
        run a condition more than once (trials). Kept while the record's episodes and items are
        unchanged (rows are only ever added or removed)."""
        key = tuple(
            self.execute(
                "SELECT (SELECT MAX(rowid) || ':' || COUNT(*) FROM episodes), "
                "(SELECT MAX(rowid) || ':' || COUNT(*) FROM items)"
            )[0]
        )
        if self._tallies is not None and self._tallies[0] == key:
            return self._tallies[1]
        metrics, several = {}, set()
        for row in self.execute(
            "SELECT id, CASE WHEN json_valid(manifest) THEN json_array_length(manifest, '$.arms') > 1 "
            "ELSE 1 END, (SELECT metrics FROM episodes "
            f"WHERE eval_id = evals.id AND status != '{ERROR}' LIMIT 1) FROM evals"
        ):
            if row[2] is not None:
                names = [name for name in json.loads(row[2]) if name not in BUILT_IN_METRICS]
                metrics[row[0]] = names[0] if names else "return"
                if row[1]:
                    several.add(row[0])
        tallies: dict[str, dict[str, tuple]] = defaultdict(dict)
        # an eval of several arms reads each episode's arm from its item; one of one arm needs not
        for members, arm, join in (
            ([e for e in metrics if e in several], "i.arm", " JOIN items i USING (eval_id, item_id)"),
            ([e for e in metrics if e not in several], "''", ""),
        ):
            if not members:
                continue
            pairs = ", ".join("(?, ?)" for _ in members)
            paths = [value for e in members for value in (e, "$." + json.dumps(metrics[e]))]
            for row in self.execute(
                f"WITH m(eval_id, path) AS (VALUES {pairs}) "
                f"SELECT e.eval_id, {arm}, COUNT(*), SUM(e.status = '{ERROR}'), COUNT(v), SUM(v), "
                f"SUM(v NOT IN (0, 1)), 0 FROM (SELECT e.eval_id, e.item_id, e.status, "
                f"CASE WHEN e.status != '{ERROR}' THEN {metric_at('m.path')} END AS v "
                f"FROM episodes e JOIN m ON m.eval_id = e.eval_id WHERE {RESULT}) e{join} "
                f"GROUP BY e.eval_id, {arm}",
                paths,
            ):
                tallies[row[0]][row[1] or ""] = tuple(row[2:])
        totals, repeated = {}, set()
        for eval_id, count, trials in self.execute(
            "SELECT eval_id, COUNT(*), MAX(trial) > 0 FROM items GROUP BY eval_id"
        ):
            totals[eval_id] = count
            if trials:
                repeated.add(eval_id)
        self._tallies = (key, (metrics, dict(tallies), totals, repeated))
        return self._tallies[1]

    def _mean_intervals(self, evals: list[EvalSummary]) -> None:
        """The interval of each arm's figure that the tallies could not give (a mean, or a rate
        whose trials repeat conditions), from the values of these evals only: clustered by
        condition within task, as the report's (`seq.stats.clustered_interval`)."""
        by_id = {e.id: e for e in evals}
        pairs = ", ".join("(?, ?)" for _ in evals)
        paths = [value for e in evals for value in (e.id, "$." + json.dumps(e.metric))]
        values: dict[tuple[str, str], list[tuple[float, str, str]]] = defaultdict(list)
        for row in self.execute(
            f"WITH m(eval_id, path) AS (VALUES {pairs}) SELECT e.eval_id, i.arm, "
            f"{metric_at('m.path')} AS v, i.item_id, json_extract(i.condition, '$.task') "
            "FROM episodes e JOIN m ON m.eval_id = e.eval_id "
            "JOIN items i ON i.eval_id = e.eval_id AND i.item_id = e.item_id "
            f"WHERE e.status != '{ERROR}' AND {RESULT} AND v IS NOT NULL",
            paths,
        ):
            arm = row[1] or ""
            values[(row[0], arm)].append((float(row[2]), condition_key(pair_key(row[3], arm)), row[4]))
        for (eval_id, arm), seen in values.items():
            for figure in by_id[eval_id].figures:
                if figure.arm == arm and figure.low is None:
                    interval = clustered_interval(
                        [v for v, _, _ in seen],
                        [c for _, c, _ in seen],
                        [t for _, _, t in seen],
                        kind=figure.kind,
                    )
                    figure.value, figure.low, figure.high = interval.mean, interval.low, interval.high

    # -- episodes -----------------------------------------------------------------------------
    def outcome_counts(self, eval_id: str) -> dict[str, int]:
        """How many of the eval's results each episode filter keeps."""
        parts = ", ".join(f"SUM({where})" for where in OUTCOMES.values())
        row = self.execute(f"SELECT {parts} FROM episodes e WHERE e.eval_id = ? AND {RESULT}", [eval_id])[0]
        return {name: int(row[index] or 0) for index, name in enumerate(OUTCOMES)}

    def episodes(
        self, eval_id: str, outcome: str = "all", offset: int = 0, limit: int = 50
    ) -> list[EpisodeResult]:
        """A page of the eval's results in plan order, kept by one of `OUTCOMES`."""
        where = OUTCOMES[outcome]
        return self._episodes(
            f"e.eval_id = ? AND {RESULT} AND {where} ORDER BY i.ordinal LIMIT ? OFFSET ?",
            [eval_id, limit, offset],
        )

    def episode(self, eval_id: str, item_id: str) -> EpisodeResult | None:
        """The item's result (its last attempt), else its last attempt of any kind."""
        found = self._episodes(f"e.eval_id = ? AND e.item_id = ? AND {LAST_ATTEMPT}", [eval_id, item_id])
        return found[0] if found else None

    def _episodes(self, where: str, args: list[Any]) -> list[EpisodeResult]:
        rows = self.execute(
            f"SELECT {columns('episodes', 'e.')}, i.condition, i.trial, i.arm "
            f"FROM episodes e JOIN items i ON e.eval_id = i.eval_id AND e.item_id = i.item_id WHERE {where}",
            args,
        )
        return [episode_from_row(row) for row in rows]


def _summary(row: sqlite3.Row, live: set[str]) -> EvalSummary:
    """An eval's row as the lists show it; of its manifest (JSON, as `seq.record.manifest`
    writes it) only the arms and the declared metric kinds are read."""
    manifest = json.loads(row["manifest"])
    status = INTERRUPTED if row["status"] == RUNNING and row["id"] not in live else row["status"]
    arms = manifest.get("arms") or []
    declared = (manifest.get("declared") or {}).get("metrics")
    error = (row["error"] or "").strip().splitlines()
    return EvalSummary(
        id=row["id"],
        created_at=row["created_at"],
        status=status,
        policy=f"{row['policy']}@v{row['policy_version']}",
        benchmark=row["benchmark"],
        benchmark_version=row["benchmark_version"],
        arms=[arm["name"] for arm in arms] or [""],
        policies=list(dict.fromkeys([row["policy"], *(arm["policy_name"] for arm in arms)])),
        wall_s=row["wall_s"],
        error=error[-1] if error else None,
        declared={str(k): str(v) for k, v in declared.items()} if isinstance(declared, dict) else {},
    )
