"""The record: one SQLite database (WAL) under `SEQ_HOME` that every plane reads and writes.

Registered versions, evals with their arguments and manifest, the work items decided before the
first episode, and one row per episode written the moment it finishes. Only the process running
an eval writes its episodes, one committed transaction each, so a killed runner loses at most the
episodes in flight.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq.authoring.conditions import Condition
from seq.errors import SeqInputError
from seq.record.arguments import EvalArguments
from seq.record.episode import ERROR, INFRASTRUCTURE, EpisodeResult, bounded_error
from seq.record.integrity import damaged, is_damage, open_record
from seq.record.lease import LeaseKey, LeaseRow, held_clause, lease_rows, this_process
from seq.record.log_retention import expired_streams, remove_log_files
from seq.record.manifest import Manifest
from seq.record.migrations import check_readable, migrate, user_version
from seq.record.paths import LOGS, check_eval_id, remove_eval_folder, seq_home
from seq.record.schema import SCHEMA_VERSION, columns, insert, select
from seq.record.states import EvalStatus
from seq.record.typed import from_plain, to_plain
from seq.record.work import WorkItem

# An episode row (aliased `e`) that is its item's last attempt.
LAST_ATTEMPT = (
    "NOT EXISTS (SELECT 1 FROM episodes l WHERE l.eval_id = e.eval_id AND l.item_id = e.item_id "
    "AND l.attempt > e.attempt)"
)
# An item (aliased `i`) with no result: no episode row yet, or its last attempt failed for a reason
# outside the policy and the benchmark (an infrastructure failure), so it is to run again.
UNFINISHED = (
    "NOT EXISTS (SELECT 1 FROM episodes e WHERE e.eval_id = i.eval_id AND e.item_id = i.item_id "
    f"AND e.failure IS NOT '{INFRASTRUCTURE}' AND {LAST_ATTEMPT})"
)
# The attempt number an item's next episode gets.
NEXT_ATTEMPT = (
    "(SELECT COALESCE(MAX(e.attempt), 0) + 1 FROM episodes e "
    "WHERE e.eval_id = i.eval_id AND e.item_id = i.item_id) AS next_attempt"
)
GroupKey = tuple[str, str, str]  # (arm, group kind, group name)
RUNNING, COMPLETED, CANCELED, FAILED = (
    EvalStatus.RUNNING,
    EvalStatus.COMPLETED,
    EvalStatus.CANCELED,
    EvalStatus.FAILED,
)
INCOMPLETE, INTERRUPTED = EvalStatus.INCOMPLETE, EvalStatus.INTERRUPTED


@dataclass(frozen=True)
class VersionRow:
    kind: str
    name: str
    version: int
    sha256: str
    ref: dict[str, Any]
    declared: dict[str, Any]
    created_at: float
    removed_at: float | None

    @property
    def label(self) -> str:
        return f"{self.name}@v{self.version}"


@dataclass(frozen=True)
class EvalRow:
    id: str
    created_at: float
    status: str
    policy: str
    policy_version: int
    benchmark: str
    benchmark_version: int
    arguments: EvalArguments
    manifest: Manifest
    wall_s: float
    setup_cpu_s: float
    finished_at: float | None
    error: str | None = None  # the exception that failed the eval (its traceback), where one did

    @property
    def error_line(self) -> str | None:
        """The failure's last line (`IntegrityError: UNIQUE constraint failed: …`)."""
        return error_line(self.error)


class Store:
    """Typed access to the record database (SQLite, WAL): registered versions (`versions`,
    `version`, `register_version`), evals (`create_eval`, `evals`, `find_eval`,
    `set_eval_status`), their work items (`items`, `unfinished`, `claim_item`), episodes
    (`write_episode`, `episodes`, `attempts`) and scores (`write_scores`, `scores`).

    Opening a record of an older seq migrates it (`seq.record.migrations`); one of a newer seq is
    refused.

    Args:
        path: the record's file (default: `$SEQ_HOME/seq.db`, `~/.seq/seq.db`); its folder is made.

    Raises:
        SeqInputError: a folder that cannot hold the record, or a record of a newer seq.
        RecordDamaged: a file that is not a sound SQLite record, naming it.
    """

    schema_version = SCHEMA_VERSION

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else seq_home() / "seq.db"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SeqInputError(
                f"{self.path.parent}: cannot hold the record ({error.strerror}); SEQ_HOME must be a folder."
            ) from None
        self._db = open_record(self.path)  # a damaged file: `RecordDamaged`, naming it
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self.migrated_from = migrate(self._db, self.path)
        self.prune_logs()  # logs past their retention go whenever the record is opened

    def close(self) -> None:
        self._db.close()

    def prune_logs(self, days: float | None = None, now: float | None = None) -> int:
        """Delete the log files (and their rows) of streams that ended more than `days` days ago
        (default: `$SEQ_LOG_RETENTION_DAYS`, else 7); a running eval's are kept. Returns how many
        streams went."""
        expired = expired_streams(self._db, days, now)
        if not expired:
            return 0
        with self.transaction() as db:
            db.executemany("DELETE FROM logs WHERE eval_id=? AND stream=?", [(e, s) for e, s, _ in expired])
        remove_log_files(expired, self.path.parent)
        return len(expired)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- versions -----------------------------------------------------------------------------
    def versions(self, kind: str, name: str | None = None, include_removed: bool = False) -> list[VersionRow]:
        query = select("versions") + " WHERE kind = ?"
        args: list[Any] = [kind]
        if name is not None:
            query += " AND name = ?"
            args.append(name)
        if not include_removed:
            query += " AND removed_at IS NULL"
        rows = self._db.execute(query + " ORDER BY name, version", args).fetchall()
        return [_version(row) for row in rows]

    def register_version(
        self, kind: str, name: str, sha256: str, ref: dict[str, Any], declared: dict[str, Any]
    ) -> tuple[VersionRow, bool]:
        """The version holding this content: the live one with the same sha256, else the next number
        (numbers are never reused, also after removal). Returns the row and whether it is new."""
        with self.transaction() as db:
            same = db.execute(
                select("versions") + " WHERE kind=? AND name=? AND sha256=? AND removed_at IS NULL "
                "ORDER BY version DESC LIMIT 1",
                (kind, name, sha256),
            ).fetchone()
            if same is not None:
                return _version(same), False
            top = db.execute(
                "SELECT MAX(version) FROM versions WHERE kind=? AND name=?", (kind, name)
            ).fetchone()[0]
            version = (top or 0) + 1
            db.execute(
                insert("versions"),
                (kind, name, version, sha256, json.dumps(ref), json.dumps(declared), time.time(), None),
            )
        return self.versions(kind, name)[-1], True

    def remove_versions(self, kind: str, name: str) -> int:
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE versions SET removed_at=? WHERE kind=? AND name=? AND removed_at IS NULL",
                (time.time(), kind, name),
            )
        return cursor.rowcount

    def version(self, kind: str, name: str, version: int) -> VersionRow | None:
        row = self._db.execute(
            select("versions") + " WHERE kind=? AND name=? AND version=?", (kind, name, version)
        ).fetchone()
        return _version(row) if row else None

    # -- evals --------------------------------------------------------------------------------
    def create_eval(
        self,
        eval_id: str,
        policy: VersionRow,
        benchmark: VersionRow,
        arguments: EvalArguments,
        manifest: Manifest,
        items: Iterable[WorkItem],
    ) -> None:
        """Store an eval and all its work items in one transaction, before any episode runs."""
        row = {
            "id": eval_id,
            "created_at": time.time(),
            "status": RUNNING,
            "policy": policy.name,
            "policy_version": policy.version,
            "benchmark": benchmark.name,
            "benchmark_version": benchmark.version,
            "arguments": json.dumps(to_plain(arguments)),
            "manifest": json.dumps(to_plain(manifest)),
        }
        with self.transaction() as db:
            db.execute(insert("evals", tuple(row)), tuple(row.values()))
            db.executemany(
                insert("items", ("eval_id", "item_id", "ordinal", "condition", "trial", "arm")),
                [
                    (eval_id, it.item_id, it.ordinal, json.dumps(it.condition.to_dict()), it.trial, it.arm)
                    for it in items
                ],
            )

    def get_eval(self, eval_id: str) -> EvalRow | None:
        row = self._db.execute(select("evals") + " WHERE id=?", (eval_id,)).fetchone()
        return self._eval(row) if row else None

    def evals(self, benchmark: str | None = None, limit: int | None = None) -> list[EvalRow]:
        query, args = select("evals"), []
        if benchmark:
            query += " WHERE benchmark=?"
            args.append(benchmark)
        query += " ORDER BY created_at DESC"
        if limit:
            query += f" LIMIT {int(limit)}"
        return [self._eval(row) for row in self._db.execute(query, args).fetchall()]

    def eval_ids(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT id FROM evals")]

    def find_eval(self, text: str) -> EvalRow | None:
        """The eval whose id is `text`, else the one whose id starts with `text` (or `ev-` + `text`),
        as git takes a commit; None when none does. A prefix several ids share is refused, naming them."""
        row = self.get_eval(check_eval_id(text))
        if row is not None or not text:
            return row
        for prefix in (text, f"ev-{text}"):
            ids = [
                found[0]
                for found in self._db.execute(
                    "SELECT id FROM evals WHERE substr(id, 1, ?) = ? ORDER BY id", (len(prefix), prefix)
                )
            ]
            if len(ids) == 1:
                return self.get_eval(ids[0])
            if ids:
                shown = ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
                raise SeqInputError(f"eval id {text!r} is ambiguous: it starts {shown}; give more of it.")
        return None

    def remove_eval(self, eval_id: str) -> int:
        """Delete an eval with its work items, episodes and scores in one transaction; returns how
        many episodes it held. Its logs go with it; its other files beside the record are the caller's
        to delete."""
        with self.transaction() as db:
            episodes = db.execute("SELECT COUNT(*) FROM episodes WHERE eval_id=?", (eval_id,)).fetchone()[0]
            for table in ("episodes", "items", "scores", "leases", "logs"):
                db.execute(f"DELETE FROM {table} WHERE eval_id=?", (eval_id,))
            db.execute("DELETE FROM evals WHERE id=?", (eval_id,))
        remove_eval_folder(self.path.parent, LOGS, eval_id)
        return episodes

    def set_eval_status(
        self,
        eval_id: str,
        status: str,
        add_wall_s: float = 0.0,
        error: str | None = None,
        lease: LeaseKey | None = None,
    ) -> None:
        """Set an eval's status (`error`: why it failed); `running` also records this process as
        its runner. With `lease` (`Lease.key`), only while that lease is held: a runner whose
        lease lapsed and was taken over leaves the eval to its new runner."""
        finished = None if status == RUNNING else time.time()
        runner = f"{socket.gethostname()}:{os.getpid()}" if status == RUNNING else None
        held = f" AND {held_clause()}" if lease else ""
        self._db.execute(
            f"UPDATE evals SET status=?, wall_s=wall_s+?, finished_at=?, runner=COALESCE(?, runner), error=? "
            f"WHERE id=?{held}",
            (status, add_wall_s, finished, runner, bounded_error(error), eval_id, *(lease or ())),
        )

    def finish_shard(self, eval_id: str, add_wall_s: float, lease: LeaseKey | None = None) -> str:
        """A shard is done: the eval is completed if no work item is left, incomplete if every one
        left was tried and failed for the infrastructure, in one statement (shards finishing
        together cannot undo each other); returns the eval's status. `lease`: as for
        `set_eval_status`."""
        held = f" AND {held_clause()}" if lease else ""
        unfinished = f"SELECT 1 FROM items i WHERE i.eval_id = evals.id AND {UNFINISHED}"
        untried = (
            f"{unfinished} AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.eval_id = i.eval_id "
            "AND e.item_id = i.item_id)"
        )
        self._db.execute(
            f"UPDATE evals SET wall_s = wall_s + ?, status = CASE WHEN NOT EXISTS ({unfinished}) THEN ? "
            f"WHEN NOT EXISTS ({untried}) THEN ? ELSE status END, finished_at = ? WHERE id = ?{held}",
            (add_wall_s, COMPLETED, INCOMPLETE, time.time(), eval_id, *(lease or ())),
        )
        return self.get_eval(eval_id).status  # type: ignore[union-attr]

    def leases(self, eval_id: str) -> list[LeaseRow]:
        """The leases held on an eval (live or not: `LeaseRow.alive` says): one per runner."""
        return lease_rows(self._db, eval_id)

    def live_leases(self, eval_id: str) -> list[LeaseRow]:
        here = this_process()
        return [lease for lease in self.leases(eval_id) if lease.alive(here)]

    def add_setup_cpu(self, eval_id: str, cpu_s: float) -> None:
        self._db.execute("UPDATE evals SET setup_cpu_s=setup_cpu_s+? WHERE id=?", (cpu_s, eval_id))

    def update_manifest(self, eval_id: str, **entries: Any) -> Manifest:
        """Set fields of an eval's manifest (typed values or their plain dicts), checked against
        `Manifest`; returns the manifest as stored."""
        with self.transaction() as db:
            row = db.execute("SELECT manifest FROM evals WHERE id=?", (eval_id,)).fetchone()
            plain = {**json.loads(row[0]), **to_plain(entries)}
            manifest = from_plain(Manifest, plain, f"{self.path}: eval {eval_id}: manifest")
            db.execute("UPDATE evals SET manifest=? WHERE id=?", (json.dumps(to_plain(manifest)), eval_id))
        return manifest

    # -- items and episodes -------------------------------------------------------------------
    def items(self, eval_id: str, unfinished_only: bool = False, errored: bool = False) -> list[WorkItem]:
        """The eval's work items in plan order, each with the number of its next attempt:
        `unfinished_only`, those with no result; with `errored`, also those whose result is an
        `error` episode (to run again: `--rerun-failed`)."""
        query = _select_items() + " WHERE eval_id=?"
        if unfinished_only:
            again = (
                f" OR EXISTS (SELECT 1 FROM episodes e WHERE e.eval_id = i.eval_id AND "
                f"e.item_id = i.item_id AND e.status = '{ERROR}' AND {LAST_ATTEMPT})"
                if errored
                else ""
            )
            query += f" AND ({UNFINISHED}{again})"
        rows = self._db.execute(query + " ORDER BY ordinal", (eval_id,)).fetchall()
        return [_item(row) for row in rows]

    def unfinished(self, eval_id: str) -> list[tuple[WorkItem, EpisodeResult | None]]:
        """The work items with no result, each with its last attempt where it has one (an
        infrastructure failure, whose `error` says why), in plan order."""
        items = self.items(eval_id, unfinished_only=True)
        last = {r.item_id: r for r in self._episode_rows(eval_id, f"e.failure = '{INFRASTRUCTURE}'")}
        return [(item, last.get(item.item_id)) for item in items]

    def reruns(self, eval_id: str) -> int:
        """Work items that ran to an end more than once (`--rerun-failed`): the report counts
        each one's last attempt."""
        return self._db.execute(
            "SELECT COUNT(*) FROM (SELECT item_id FROM episodes WHERE eval_id=? AND failure IS NOT ? "
            "GROUP BY item_id HAVING COUNT(*) > 1)",
            (eval_id, INFRASTRUCTURE),
        ).fetchone()[0]

    def claim_item(
        self, eval_id: str, shard: str, shard_index: int, shards: int, skip: set[str]
    ) -> WorkItem | None:
        """Claim the next work item for a shard, in one transaction: its own unfinished item first (a
        shard restarted after a crash resumes), then its share (`ordinal % shards == shard_index`),
        then any item nobody has claimed. `skip`: items this process has already taken."""
        choices = [
            ("claimed_by = ?", (shard,)),
            ("claimed_by IS NULL AND ordinal % ? = ?", (shards, shard_index)),
            ("claimed_by IS NULL", ()),
        ]
        with self.transaction() as db:
            for where, args in choices:
                rows = db.execute(
                    _select_items() + f" WHERE eval_id=? AND {UNFINISHED} AND {where} "
                    f"ORDER BY ordinal LIMIT {len(skip) + 1}",
                    (eval_id, *args),
                ).fetchall()
                row = next((r for r in rows if r["item_id"] not in skip), None)
                if row is not None:
                    db.execute(
                        "UPDATE items SET claimed_by=?, claimed_at=? WHERE eval_id=? AND item_id=?",
                        (shard, time.time(), eval_id, row["item_id"]),
                    )
                    return _item(row)
        return None

    def has_claimable(self, eval_id: str, shard: str, skip: set[str]) -> bool:
        """Whether an unfinished item is free, or claimed by `shard` and not in `skip`."""
        rows = self._db.execute(
            "SELECT item_id FROM items i WHERE eval_id=? AND (claimed_by IS NULL OR claimed_by=?) "
            f"AND {UNFINISHED} LIMIT {len(skip) + 1}",
            (eval_id, shard),
        ).fetchall()
        return any(row[0] not in skip for row in rows)

    def release_claims(self, eval_id: str, shard: str) -> int:
        """Hand a shard's unfinished items back to the others."""
        cursor = self._db.execute(
            "UPDATE items SET claimed_by=NULL, claimed_at=NULL WHERE eval_id=? AND item_id IN "
            f"(SELECT item_id FROM items i WHERE eval_id=? AND claimed_by=? AND {UNFINISHED})",
            (eval_id, eval_id, shard),
        )
        return cursor.rowcount

    def merge_from(self, path: Path | str) -> dict[str, int]:
        """Merge another record of the same evals (a shard's, a machine's) into this one: versions,
        evals and items it lacks, and for each item the last committed episode of the two. A record
        of an older seq is read through a migrated copy (the file itself is left as it is)."""
        with _attached(self, path) as db:
            counts = {table: db.execute(_copy(table)).rowcount for table in ("versions", "evals", "items")}
            counts["episodes"] = db.execute(
                _copy("episodes", "OR REPLACE")
                + " LEFT JOIN episodes m ON m.eval_id = o.eval_id AND m.item_id = o.item_id "
                "AND m.attempt = o.attempt "
                "WHERE m.item_id IS NULL OR o.finished_at > m.finished_at"
            ).rowcount
            db.execute(_copy("scores"))
            for (eval_id,) in db.execute("SELECT id FROM evals").fetchall():
                if not db.execute(
                    f"SELECT 1 FROM items i WHERE eval_id=? AND {UNFINISHED}", (eval_id,)
                ).fetchone():
                    db.execute(
                        "UPDATE evals SET status=? WHERE id=? AND status=?", (COMPLETED, eval_id, RUNNING)
                    )
        return counts

    def copy_versions_from(self, path: Path | str) -> None:
        """Take every registered version of another record (a scratch record needs them to run)."""
        with _attached(self, path) as db:
            db.execute(_copy("versions"))

    def keep_share(self, eval_id: str, index: int, count: int) -> None:
        """Drop every work item outside share `index` of `count` (round-robin by ordinal)."""
        self._db.execute("DELETE FROM items WHERE eval_id=? AND ordinal % ? != ?", (eval_id, count, index))

    def count_items(self, eval_id: str) -> int:
        return self._db.execute("SELECT COUNT(*) FROM items WHERE eval_id=?", (eval_id,)).fetchone()[0]

    def write_episode(self, eval_id: str, result: EpisodeResult, add_wall_s: float = 0.0) -> None:
        """Commit one finished episode, with the runner's wall time since it last added some (so
        that a runner killed keeps it); a second row for the same item and attempt is refused by
        the key (`EpisodeConflict`: two runners worked the same item)."""
        try:
            with self.transaction():
                self._write_episode(eval_id, result)
                if add_wall_s:
                    add = "UPDATE evals SET wall_s = wall_s + ? WHERE id = ?"
                    self._db.execute(add, (add_wall_s, eval_id))
        except sqlite3.IntegrityError as error:
            raise EpisodeConflict(
                f"eval {eval_id}: item {result.item_id} already has an episode, so another runner "
                f"is working this eval ({error})."
            ) from None

    def _write_episode(self, eval_id: str, result: EpisodeResult) -> None:
        self._db.execute(
            insert("episodes"),
            (
                eval_id,
                result.item_id,
                result.status,
                json.dumps(result.metrics),
                result.steps,
                result.seed,
                result.duration_s,
                result.cpu_s,
                result.queries,
                result.ended_by,
                bounded_error(result.error),
                time.time(),
                json.dumps(result.artifacts),
                result.attempt,
                result.failure,
            ),
        )

    def episodes(self, eval_id: str) -> list[EpisodeResult]:
        """The eval's results: each work item's last attempt, unless that failed for the
        infrastructure (then the item has no result yet: `unfinished`)."""
        return self._episode_rows(eval_id, f"e.failure IS NOT '{INFRASTRUCTURE}' AND {LAST_ATTEMPT}")

    def attempts(self, eval_id: str) -> list[EpisodeResult]:
        """Every episode row of the eval, earlier attempts and infrastructure failures included."""
        return self._episode_rows(eval_id, "1")

    def _episode_rows(self, eval_id: str, where: str) -> list[EpisodeResult]:
        rows = self._db.execute(
            f"SELECT {columns('episodes', 'e.')}, i.condition, i.trial, i.ordinal, i.arm "
            "FROM episodes e JOIN items i ON e.eval_id=i.eval_id AND e.item_id=i.item_id "
            f"WHERE e.eval_id=? AND {where} ORDER BY i.ordinal, e.attempt",
            (eval_id,),
        ).fetchall()
        return [episode_from_row(row) for row in rows]

    def write_scores(self, eval_id: str, scores: dict[GroupKey, tuple[dict | None, str | None]]) -> None:
        """Replace an eval's score-hook results, keyed by (arm, group kind, group name)."""
        with self.transaction() as db:
            db.execute("DELETE FROM scores WHERE eval_id=?", (eval_id,))
            db.executemany(
                insert("scores"),
                [
                    (
                        eval_id,
                        arm,
                        kind,
                        name,
                        None if values is None else json.dumps(values),
                        bounded_error(error),
                    )
                    for (arm, kind, name), (values, error) in scores.items()
                ],
            )

    def _eval(self, row: sqlite3.Row) -> EvalRow:
        where = f"{self.path}: eval {row['id']}"
        return EvalRow(
            row["id"],
            row["created_at"],
            self._live_status(row["id"], row["status"]),
            row["policy"],
            row["policy_version"],
            row["benchmark"],
            row["benchmark_version"],
            from_plain(EvalArguments, json.loads(row["arguments"]), f"{where}: arguments"),
            from_plain(Manifest, json.loads(row["manifest"]), f"{where}: manifest"),
            row["wall_s"],
            row["setup_cpu_s"],
            row["finished_at"],
            bounded_error(row["error"]),
        )

    def _live_status(self, eval_id: str, status: str) -> str:
        """`running` only while a runner holds a live lease on the eval; else it was interrupted."""
        return INTERRUPTED if status == RUNNING and not self.live_leases(eval_id) else status

    def scores(self, eval_id: str) -> dict[GroupKey, tuple[dict | None, str | None]]:
        rows = self._db.execute(select("scores") + " WHERE eval_id=?", (eval_id,)).fetchall()
        return {
            (row["arm"], row["group_kind"], row["group_name"]): (
                None if row["values_json"] is None else json.loads(row["values_json"]),
                bounded_error(row["error"]),
            )
            for row in rows
        }


def _select_items() -> str:
    """`SELECT` of the items (aliased `i`), each with the number of its next attempt."""
    return f"SELECT {columns('items', 'i.')}, {NEXT_ATTEMPT} FROM items i"


def _item(row: sqlite3.Row) -> WorkItem:
    condition = Condition.from_dict(json.loads(row["condition"]))
    return WorkItem(row["item_id"], row["ordinal"], condition, row["trial"], row["arm"], row["next_attempt"])


def _version(row: sqlite3.Row) -> VersionRow:
    return VersionRow(
        row["kind"],
        row["name"],
        row["version"],
        row["sha256"],
        json.loads(row["ref"]),
        json.loads(row["declared"]),
        row["created_at"],
        row["removed_at"],
    )


class EpisodeConflict(RuntimeError):
    """An item already has an episode: two runners worked the same eval (a lapsed lease)."""


def error_line(error: str | None) -> str | None:
    """What failed an eval, in one line: a traceback's last (the exception's type and message),
    a sentence's first."""
    lines = [line.strip() for line in (error or "").splitlines() if line.strip()]
    if not lines:
        return None
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def _copy(table: str, conflict: str = "OR IGNORE") -> str:
    """`INSERT … INTO table (columns) SELECT o.columns FROM other.table o`: by name, in any order."""
    selected = columns(table, "o.")
    return f"INSERT {conflict} INTO {table} ({columns(table)}) SELECT {selected} FROM other.{table} o"


@contextmanager
def _attached(store: Store, path: Path | str) -> Iterator[sqlite3.Connection]:
    """Another record attached as `other`, at this seq's schema version, inside one transaction."""
    probe = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True)
    try:
        version = user_version(probe)
        sound = probe.execute("PRAGMA quick_check(1)").fetchone()[0] == "ok"
    except sqlite3.DatabaseError as error:
        if is_damage(error):
            raise damaged(path, f"SQLite: {error}") from None
        raise SeqInputError(f"{path}: not a seq record ({error}).") from None
    finally:
        probe.close()
    if not sound:
        raise damaged(path, "SQLite's quick check fails")
    check_readable(version, path)
    with ExitStack() as stack:
        if version < SCHEMA_VERSION:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="seq-merge-"))) / "seq.db"
            source, copy = sqlite3.connect(path), sqlite3.connect(scratch)
            source.backup(copy)
            source.close()
            copy.close()
            Store(scratch).close()  # migrates the copy
            path = scratch
        with store.transaction() as db:
            db.execute("ATTACH DATABASE ? AS other", (str(path),))
        try:
            with store.transaction() as db:
                yield db
        finally:
            store._db.execute("DETACH DATABASE other")


def episode_from_row(row: sqlite3.Row) -> EpisodeResult:
    """An episode row joined with its work item (`condition`, `trial`, `arm`) as an `EpisodeResult`."""
    condition = json.loads(row["condition"])
    return EpisodeResult(
        item_id=row["item_id"],
        task=condition["task"],
        seed=row["seed"],
        trial=row["trial"],
        suite=condition.get("suite"),
        variation=condition.get("variation"),
        arm=row["arm"],
        status=row["status"],
        metrics=json.loads(row["metrics"]),
        steps=row["steps"],
        duration_s=row["duration_s"],
        cpu_s=row["cpu_s"],
        queries=row["queries"],
        ended_by=row["ended_by"],
        error=bounded_error(row["error"]),  # a record written before errors were bounded
        artifacts=json.loads(row["artifacts"]),
        attempt=row["attempt"],
        failure=row["failure"],
    )
