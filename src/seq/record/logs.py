"""What an eval's processes printed: its logs, kept beside the record for a while.

Each stream is one process's output — a benchmark worker (`side` "benchmark", `instance` its
number among the eval's workers) or a policy server seq started (`side` "policy", `instance` its
arm's number) — written as JSON lines (`{"t": time, "arm": arm, "text": line}`) into a file under
`<record folder>/logs/<eval id>/`. A row of the `logs` table names each file: the row, never a file
name, says which eval, side and instance a file holds. Lines are masked before they are written
(`seq.isolation.secrets.Masker`), so no secret reaches the disk.

Logs are kept `SEQ_LOG_RETENTION_DAYS` days (7 by default) after their stream ended; older ones are
pruned whenever the record is opened, or by `seq eval prune-logs` (`seq.record.log_retention`).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seq.errors import SeqInputError
from seq.record.paths import LOGS, eval_folder
from seq.record.schema import insert, select
from seq.record.states import EvalStatus

if TYPE_CHECKING:  # a worker writes its logs without loading the record's store
    from seq.record.store import Store

BENCHMARK_SIDE, POLICY_SIDE = "benchmark", "policy"
SIDES = (BENCHMARK_SIDE, POLICY_SIDE)
FOLLOW_POLL_S = 0.2


@dataclass(frozen=True)
class LogLine:
    """One line one process printed, with where it came from."""

    time: float
    side: str
    instance: int
    arm: str
    text: str

    @property
    def source(self) -> str:
        """`benchmark 0`, `policy 1 (arm B)`: where the line came from, for people."""
        arm = f" ({self.arm})" if self.arm else ""
        return f"{self.side} {self.instance}{arm}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "side": self.side,
            "instance": self.instance,
            "arm": self.arm,
            "text": self.text,
        }


@dataclass(frozen=True)
class LogStream:
    """One process's log file, as its row in the `logs` table names it."""

    eval_id: str
    stream: str
    side: str
    instance: int
    path: Path
    started_at: float
    ended_at: float | None


class StreamWriter:
    """Appends masked lines to one stream's file; safe to call from several threads."""

    def __init__(self, stream: LogStream) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._file = stream.path.open("a", encoding="utf-8", buffering=1)

    def write(self, text: str, arm: str = "") -> None:
        line = json.dumps({"t": time.time(), "arm": arm, "text": text.rstrip("\r\n")}) + "\n"
        with self._lock:
            if not self._file.closed:
                self._file.write(line)

    def close(self) -> None:
        with self._lock:
            self._file.close()


def logs_folder(store: Store, eval_id: str) -> Path:
    """Where an eval's log files are written: beside the record."""
    return eval_folder(store.path.parent, LOGS, eval_id)


def open_stream(store: Store, eval_id: str, side: str, instance: int) -> StreamWriter:
    """A new stream of `eval_id` (its row written now), ready to take lines."""
    folder = logs_folder(store, eval_id)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{side}-{instance}-{secrets.token_hex(4)}"  # a resumed eval's workers are new streams
    path = folder / f"{name}.jsonl"
    path.touch()
    now = time.time()
    store._db.execute(insert("logs"), (eval_id, name, side, instance, str(path), now, None))
    return StreamWriter(LogStream(eval_id, name, side, instance, path, now, None))


def end_streams(store: Store, writers: list[StreamWriter]) -> None:
    """Mark the streams ended (their retention counts from now)."""
    now = time.time()
    for writer in writers:
        store._db.execute(
            "UPDATE logs SET ended_at=? WHERE eval_id=? AND stream=?",
            (now, writer.stream.eval_id, writer.stream.stream),
        )


def streams(
    store: Store, eval_id: str, side: str | None = None, instance: int | None = None
) -> list[LogStream]:
    """The eval's streams, oldest first, narrowed to one side and instance."""
    query, args = select("logs") + " WHERE eval_id=?", list[Any]([eval_id])
    if side is not None:
        query += " AND side=?"
        args.append(side)
    if instance is not None:
        query += " AND instance=?"
        args.append(instance)
    rows = store._db.execute(query + " ORDER BY started_at, stream", args).fetchall()
    return [
        LogStream(
            r["eval_id"],
            r["stream"],
            r["side"],
            r["instance"],
            Path(r["path"]),
            r["started_at"],
            r["ended_at"],
        )
        for r in rows
    ]


def _read_from(stream: LogStream, offset: int) -> tuple[list[LogLine], int]:
    """The complete lines of `stream` from byte `offset` on, and the offset after them."""
    try:
        with stream.path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:  # pruned, or its folder removed
        return [], offset
    end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
    lines = []
    for raw in data[:end].splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        lines.append(LogLine(entry["t"], stream.side, stream.instance, entry.get("arm", ""), entry["text"]))
    return lines, offset + end


def check_filters(side: str | None, instance: int | None) -> None:
    if side is not None and side not in SIDES:
        raise SeqInputError(f"--side {side}: expected benchmark or policy.")
    if instance is not None and instance < 0:
        raise SeqInputError(f"--instance {instance}: expected a number of 0 or more.")


def read_logs(
    store: Store,
    eval_id: str,
    side: str | None = None,
    arm: str | None = None,
    instance: int | None = None,
    follow: bool = False,
    poll_s: float = FOLLOW_POLL_S,
) -> Iterator[LogLine]:
    """The eval's lines in the order they were printed, narrowed by side, arm and instance;
    with `follow`, new lines as they are written until the eval is no longer running."""
    check_filters(side, instance)
    offsets: dict[str, int] = {}

    def fresh() -> list[LogLine]:
        found: list[LogLine] = []
        for stream in streams(store, eval_id, side, instance):
            lines, offsets[stream.stream] = _read_from(stream, offsets.get(stream.stream, 0))
            found.extend(line for line in lines if arm is None or line.arm == arm)
        return sorted(found, key=lambda line: line.time)

    yield from fresh()
    if not follow:
        return
    while True:
        row = store.get_eval(eval_id)
        running = row is not None and row.status == EvalStatus.RUNNING
        if not running:
            time.sleep(poll_s)  # the last lines its relays were still writing
            yield from fresh()
            return
        time.sleep(poll_s)
        yield from fresh()
