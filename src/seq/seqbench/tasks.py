"""Task files: the CSV schema, reading every file once, and schema/consistency validation.

Each row is one example or probe. Columns (all present, in this order):

- `id`: unique across every file of a run (letters, digits and `._:-`).
- `family`: the task family (`markov`, `recall`, `binding`, `multihop`, `compose`).
- `split`: `train` (sent to `learn`), `test` (sent to `infer`) or `correction` (a one-example update).
- `condition`: a label inside the family (`short`, `long`, `exact`, `paraphrase`, `stress`, …).
- `variant`: how the row was made: `base`, `oracle`, `nonce`, `counterfactual`, `noise`, `supervision`.
- `pair_id`: the id of the base row this row was derived from (a base row names itself).
- `input`, `target`: space-separated tokens, never empty.
- `candidates`: `|`-separated alternatives scored against each other; empty means the target alone.
- `meta`: a JSON object (or empty) with generator facts the materializers use.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seq.errors import SeqInputError

COLUMNS = (
    "id",
    "family",
    "split",
    "condition",
    "variant",
    "pair_id",
    "input",
    "target",
    "candidates",
    "meta",
)
FAMILIES = ("markov", "recall", "binding", "multihop", "compose")
SPLITS = ("train", "test", "correction")
VARIANTS = ("base", "oracle", "nonce", "counterfactual", "noise", "supervision")
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:\-]+$")
MAX_REPORTED_PROBLEMS = 50


@dataclass(frozen=True)
class TaskRow:
    """One row of a task file, with where it came from (file and 1-based data row number)."""

    id: str
    family: str
    split: str
    condition: str
    variant: str
    pair_id: str
    input: str
    target: str
    candidates: tuple[str, ...]
    meta: dict = field(default_factory=dict, hash=False, compare=False)
    source: str = ""
    row_number: int = 0

    def value(self, column: str) -> str:
        """The row's value for a selector column (`candidates` and `meta` are not selectable)."""
        return getattr(self, column)

    def to_csv(self) -> dict[str, str]:
        """The row as a CSV record."""
        return {
            "id": self.id,
            "family": self.family,
            "split": self.split,
            "condition": self.condition,
            "variant": self.variant,
            "pair_id": self.pair_id,
            "input": self.input,
            "target": self.target,
            "candidates": "|".join(self.candidates),
            "meta": json.dumps(self.meta, sort_keys=True) if self.meta else "",
        }


@dataclass(frozen=True)
class Problem:
    """One schema or consistency error, located by file, row and column."""

    file: str
    row: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column:
            where += f", column {self.column}"
        return f"{where}: {self.message}"


def _check_row(record: dict[str, str], file: str, row: int) -> tuple[TaskRow | None, list[Problem]]:
    problems: list[Problem] = []

    def bad(column: str, message: str) -> None:
        problems.append(Problem(file, row, column, message))

    for column in ("id", "family", "split", "condition", "variant", "input", "target"):
        if not (record.get(column) or "").strip():
            bad(column, "is empty")
    row_id = (record.get("id") or "").strip()
    if row_id and not ID_PATTERN.match(row_id):
        bad("id", f"'{row_id}' has characters outside letters, digits and ._:-")
    for column, allowed in (("family", FAMILIES), ("split", SPLITS), ("variant", VARIANTS)):
        value = (record.get(column) or "").strip()
        if value and value not in allowed:
            bad(column, f"'{value}' is not one of {', '.join(allowed)}")
    candidates = tuple(c.strip() for c in (record.get("candidates") or "").split("|") if c.strip())
    target = " ".join((record.get("target") or "").split())
    if candidates and target and target not in candidates:
        bad("candidates", f"do not include the target '{target}'")
    if len(set(candidates)) != len(candidates):
        bad("candidates", "repeat an alternative")
    meta: dict = {}
    raw_meta = (record.get("meta") or "").strip()
    if raw_meta:
        try:
            meta = json.loads(raw_meta)
        except json.JSONDecodeError as error:
            bad("meta", f"is not valid JSON ({error.msg})")
        else:
            if not isinstance(meta, dict):
                bad("meta", "must be a JSON object")
                meta = {}
    if problems:
        return None, problems
    task = TaskRow(
        id=row_id,
        family=record["family"].strip(),
        split=record["split"].strip(),
        condition=record["condition"].strip(),
        variant=record["variant"].strip(),
        pair_id=(record.get("pair_id") or "").strip() or row_id,
        input=" ".join(record["input"].split()),
        target=target,
        candidates=candidates,
        meta=meta,
        source=file,
        row_number=row,
    )
    return task, []


def read_task_file(path: Path) -> tuple[list[TaskRow], list[Problem]]:
    """Read one CSV file; rows are numbered from 1 after the header, as a spreadsheet shows them + 1."""
    name = str(path)
    if not path.is_file():
        return [], [Problem(name, None, None, "does not exist")]
    rows: list[TaskRow] = []
    problems: list[Problem] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return [], [Problem(name, None, None, "is empty (no header row); rebuild it")]
        if tuple(h.strip() for h in header) != COLUMNS:
            return [], [
                Problem(name, 1, None, f"header must be {','.join(COLUMNS)}, found {','.join(header)}")
            ]
        for row_number, values in enumerate(reader, start=2):
            if not values:
                continue
            if len(values) != len(COLUMNS):
                problems.append(
                    Problem(
                        name,
                        row_number,
                        None,
                        f"expected {len(COLUMNS)} columns, found {len(values)}"
                        " (an interrupted build leaves a truncated file: rebuild it)",
                    )
                )
                continue
            task, row_problems = _check_row(dict(zip(COLUMNS, values, strict=True)), name, row_number)
            problems.extend(row_problems)
            if task is not None:
                rows.append(task)
    if not _ends_with_newline(path):
        last = max([r.row_number for r in rows] + [p.row or 0 for p in problems], default=2)
        rows = [r for r in rows if r.row_number != last]
        problems = [p for p in problems if p.row != last]
        problems.append(
            Problem(
                name,
                last,
                None,
                "is incomplete: the file does not end with a newline "
                "(an interrupted build leaves a truncated file: rebuild it)",
            )
        )
    return rows, problems


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, 2)
        if handle.tell() == 0:
            return True
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def check_consistency(rows: Sequence[TaskRow]) -> list[Problem]:
    """Problems that span rows or files: duplicate ids, dangling pair ids, contradicting train rows."""
    problems: list[Problem] = []
    first_seen: dict[str, TaskRow] = {}
    for row in rows:
        if row.id in first_seen:
            earlier = first_seen[row.id]
            problems.append(
                Problem(
                    row.source,
                    row.row_number,
                    "id",
                    f"'{row.id}' repeats {earlier.source} row {earlier.row_number}",
                )
            )
        else:
            first_seen[row.id] = row
    has_base = any(r.variant == "base" for r in rows)
    if has_base:
        for row in rows:
            if row.pair_id != row.id and row.pair_id not in first_seen:
                problems.append(
                    Problem(row.source, row.row_number, "pair_id", f"'{row.pair_id}' names no row")
                )
    for row in rows:
        if row.variant == "base" and row.pair_id != row.id:
            problems.append(Problem(row.source, row.row_number, "pair_id", "a base row must name itself"))
    return problems


def read_task_files(paths: Iterable[Path]) -> list[TaskRow]:
    """Read every file once and validate it; any problem is bad input (the first ones are listed)."""
    rows, problems = _read_and_check(paths)
    if problems:
        more = f" (and {len(problems) - 1} more; run seqbench validate-csv)" if len(problems) > 1 else ""
        raise SeqInputError(f"{problems[0]}{more}.")
    return rows


def validate_files(paths: Iterable[Path]) -> tuple[int, list[Problem]]:
    """All problems of a collection of files and the number of rows that passed."""
    rows, problems = _read_and_check(paths)
    return len(rows), problems


def _read_and_check(paths: Iterable[Path]) -> tuple[list[TaskRow], list[Problem]]:
    """The rows of every file, and the problems of each file and of the rows together."""
    rows: list[TaskRow] = []
    problems: list[Problem] = []
    for path in paths:
        file_rows, file_problems = read_task_file(Path(path))
        rows.extend(file_rows)
        problems.extend(file_problems)
    problems.extend(check_consistency(rows))
    return rows, problems


def write_task_file(path: Path, rows: Iterable[TaskRow]) -> int:
    """Stream rows to a CSV file as they come (an interrupted write leaves a truncated file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row.to_csv())
            count += 1
    return count
