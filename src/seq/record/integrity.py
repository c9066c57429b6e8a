"""A record that is not sound is said so in one sentence naming its file, never a traceback.

SQLite reports a truncated or overwritten file (`database disk image is malformed`, `file is not a
database`) on whichever statement first reads a damaged page, so the record's connection
(`GuardedConnection`) turns those errors, wherever they arise, into `RecordDamaged`, a
`SeqInputError` naming the file. A new record is built aside and linked into place whole, so an
empty `seq.db` is never a record being born: it is refused as damaged, not read as empty.
Every opening of the record (`open_record`, and `refuse_unsound` for a command that only reads
what lies beside it) first checks it the same way: the path must be a regular file (not a
directory, a dangling link or a pipe), and SQLite's quick check must pass, so a record with a few
damaged pages is refused by every command, not only by those that happen to read those pages. The
quick check reads every page once (about a second per GB), so its verdict is kept for the process
while the file and its write-ahead log are unchanged. `check_record` runs SQLite's integrity check
and reports the schema version.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.migrations import check_layout, migrate, user_version
from seq.record.paths import seq_home
from seq.record.schema import SCHEMA_VERSION

SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26
REMEDY = "restore it from a backup, or move it away to start a new record"
SHOWN_PROBLEMS = 100  # what `PRAGMA integrity_check(N)` lists at most


class RecordDamaged(SeqInputError):
    """The record's file is damaged (truncated, overwritten, empty): one sentence naming it."""


def is_damage(error: BaseException) -> bool:
    """Whether an SQLite error means the file itself is damaged (not a lock, a constraint, a bug)."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB)
    text = str(error)
    return "malformed" in text or "not a database" in text


def damaged(path: Path | str, why: str) -> RecordDamaged:
    return RecordDamaged(f"{path}: the record is damaged ({why}); {REMEDY} (seq record check tells more).")


class GuardedCursor(sqlite3.Cursor):
    """A cursor whose damage errors become `RecordDamaged` naming the record's file."""

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:
        with _Guard(self.connection):
            return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> GuardedCursor:
        with _Guard(self.connection):
            return super().executemany(sql, parameters)

    def fetchone(self) -> Any:
        with _Guard(self.connection):
            return super().fetchone()

    def fetchmany(self, size: int | None = None) -> list[Any]:
        with _Guard(self.connection):
            return super().fetchmany(self.arraysize if size is None else size)

    def fetchall(self) -> list[Any]:
        with _Guard(self.connection):
            return super().fetchall()

    def __next__(self) -> Any:
        with _Guard(self.connection):
            return super().__next__()


class GuardedConnection(sqlite3.Connection):
    """The record's connection (`sqlite3.connect(..., factory=GuardedConnection)`): every
    statement runs on a `GuardedCursor`; `path` is the file errors name."""

    path: Path | str = "the record"

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:
        return self.cursor(GuardedCursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> GuardedCursor:
        return self.cursor(GuardedCursor).executemany(sql, parameters)


class _Guard:
    """Turns a damage error raised inside it into `RecordDamaged` naming the connection's file."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.path = getattr(connection, "path", "the record")

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> None:
        if error is not None and is_damage(error):
            raise damaged(self.path, f"SQLite: {error}") from None


def open_record(path: Path) -> GuardedConnection:
    """A guarded connection (autocommit) to the record at `path`, creating it whole if absent and
    refusing one that is not a regular file or is not sound (`RecordDamaged`). The caller sets
    the journal mode and migrates."""
    _refuse_not_a_file(path)
    if _empty(path):
        raise damaged(path, "the file is empty, 0 bytes, which a record never is")
    if not path.exists():
        _create(path)
    try:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, factory=GuardedConnection)
    except sqlite3.OperationalError as error:
        raise SeqInputError(f"{path}: cannot open the record ({error}); check its permissions.") from None
    db.path = path
    try:
        _refuse_unsound(db, path)
    except BaseException:
        db.close()
        raise
    return db


def refuse_unsound(path: Path) -> None:
    """Refuse the record at `path` as `open_record` would, where one exists, without creating one
    (for a command that lists what lies beside the record, such as `seq grid ls`)."""
    _refuse_not_a_file(path)
    if not path.exists():
        return
    if _empty(path):
        raise damaged(path, "the file is empty, 0 bytes, which a record never is")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, factory=GuardedConnection)
    db.path = path
    try:
        _refuse_unsound(db, path)
    finally:
        db.close()


def _refuse_not_a_file(path: Path) -> None:
    """A record path that names something other than a regular file (or nothing): one sentence."""
    if path.is_file() or not os.path.lexists(path):
        return
    what = "a directory" if path.is_dir() else "a link to nothing" if path.is_symlink() else "something else"
    raise RecordDamaged(f"{path}: the record is {what}, not a file; move it away to start a new record.")


# (path, identity of the file and of its write-ahead log) that passed the quick check in this process
_sound: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()


def _identity(path: Path) -> tuple[int, ...]:
    try:
        status = path.stat()
    except FileNotFoundError:
        return ()
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def _refuse_unsound(db: sqlite3.Connection, path: Path) -> None:
    """`RecordDamaged` when the file falls short of its header or fails SQLite's quick check."""
    short = _truncation(db, path)
    if short:
        raise damaged(path, short)
    key = (str(path), _identity(path), _identity(path.with_name(path.name + "-wal")))
    if key in _sound:
        return
    found = db.execute("PRAGMA quick_check(1)").fetchone()[0]  # a guarded connection's: damage raises
    if found != "ok":
        first = next((line.strip() for line in str(found).splitlines() if "***" not in line), str(found))
        raise damaged(path, f"SQLite's quick check: {first}")
    _sound.add(key)


def _empty(path: Path) -> bool:
    """An empty file with no write-ahead log holding its pages."""
    try:
        if path.stat().st_size:
            return False
    except FileNotFoundError:
        return False
    wal = path.with_name(path.name + "-wal")
    return not wal.exists() or wal.stat().st_size == 0


def _truncation(db: sqlite3.Connection, path: Path) -> str | None:
    """How the file falls short of the size its header promises, when it does. SQLite reads the
    missing pages as zeros (some tables then look empty), so this is checked before anything is
    read. Only with no write-ahead log in use: then no checkpoint is writing the file. The header
    is read by SQLite itself: opening the file apart from it and closing that would drop the
    locks this process's connections hold on it (POSIX locks belong to the process)."""
    wal = path.with_name(path.name + "-wal")
    try:
        if wal.exists() and wal.stat().st_size:
            return None
        size = path.stat().st_size
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
    except (OSError, sqlite3.DatabaseError):
        return None  # not SQLite at all, or unreadable: SQLite says so at the first query
    if size < pages * page_size:
        promised = pages * page_size
        return f"the file holds {size:,} bytes of the {promised:,} its header promises: it was cut short"
    return None


def _create(path: Path) -> None:
    """Write a fresh record beside `path` and link it into place: another process opening
    `path` finds nothing or a whole record. One created by another process first wins."""
    fresh = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.new")
    try:
        db = sqlite3.connect(fresh, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        migrate(db, path)
        db.close()
        try:
            os.link(fresh, path)
        except FileExistsError:
            pass
        except OSError:  # a filesystem without hard links
            if not path.exists():
                os.replace(fresh, path)
    finally:
        for leftover in (fresh, fresh.with_name(fresh.name + "-wal"), fresh.with_name(fresh.name + "-shm")):
            leftover.unlink(missing_ok=True)


@dataclass(frozen=True)
class RecordCheck:
    """What `check_record` found: SQLite's integrity problems (none: the record is sound), the
    schema version, and what the record holds."""

    path: Path
    size_bytes: int
    schema_version: int | None  # None: not readable as SQLite
    problems: list[str] = field(default_factory=list)
    evals: int | None = None
    episodes: int | None = None
    current_version: int = SCHEMA_VERSION  # what this seq writes

    @property
    def ok(self) -> bool:
        return not self.problems

    def version_text(self) -> str:
        version, current = self.schema_version, self.current_version
        if version is None:
            return "schema version unknown (SQLite cannot read it)"
        if version == current:
            return f"schema version {version} (this seq's)"
        if version > current:
            return f"schema version {version}, written by a newer seq (this one reads up to {current})"
        return f"schema version {version} (this seq migrates it to {current} when it next opens it)"

    def summary(self) -> str:
        """One sentence: sound, or damaged with how many problems (`problems` lists them)."""
        if self.ok:
            return f"{self.path}: sound."
        count = len(self.problems)
        many = f"{count}{'+' if count >= SHOWN_PROBLEMS else ''} problems" if count > 1 else "1 problem"
        return f"{self.path}: damaged ({many}); {REMEDY}."

    def details(self) -> str:
        """The schema version, what the record holds (where readable) and its size."""
        held = ""
        if self.evals is not None and self.episodes is not None:
            held = f"; {_count(self.evals, 'eval')}, {_count(self.episodes, 'episode')}"
        return f"{self.version_text()}{held}; {self.size_bytes:,} bytes"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "ok": self.ok,
            "schema_version": self.schema_version,
            "current_version": self.current_version,
            "problems": self.problems,
            "evals": self.evals,
            "episodes": self.episodes,
            "size_bytes": self.size_bytes,
        }


def check_record(path: str | Path | None = None) -> RecordCheck:
    """Run SQLite's integrity check on a record (default: this workspace's) without changing it:
    no migration, no write. A missing file is refused; a damaged one is reported, not raised.

    >>> seq.check_record().ok
    True
    """
    if path is None:
        path = seq_home() / "seq.db"
    path = Path(path)
    if not path.is_file():
        raise SeqInputError(f"{path}: no record there (seq creates one when it first stores something).")
    size = path.stat().st_size
    if _empty(path):
        return RecordCheck(path, size, None, ["the file is empty, 0 bytes, which a record never is"])
    problems: list[str] = []
    version = evals = episodes = None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        short = _truncation(db, path)
        problems += [short] if short else []
        version = user_version(db)
        rows = db.execute(f"PRAGMA integrity_check({SHOWN_PROBLEMS})").fetchall()
        found = [line.strip() for row in rows for line in str(row[0]).splitlines() if line.strip()]
        problems += [line for line in found if line not in ("ok", "*** in database main ***")]
        if not problems and version == SCHEMA_VERSION:
            try:
                check_layout(db, path)
            except SeqInputError as error:
                problems.append(str(error))
        if not problems and version <= SCHEMA_VERSION:
            evals = db.execute("SELECT COUNT(*) FROM evals").fetchone()[0]
            episodes = db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.DatabaseError as error:
        problems.append(f"SQLite cannot read it: {error}")
    finally:
        db.close()
    return RecordCheck(path, size, version, problems, evals, episodes)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
