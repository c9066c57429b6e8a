"""Whose failure an episode's error is, and its traceback as the user reads it.

An `error` episode is data when the policy or the benchmark failed (its own exception, an output
that is not an action, a `step` that breaks the env contract): it is counted in the report. It is
an infrastructure failure when the episode could not run to an end for a reason outside both:
the policy server unreachable or gone, the worker process dead, a module that does not import in
the benchmark's environment. Then the work item stays unfinished, the eval ends `incomplete`,
and `--resume` runs it again.

A traceback keeps the frames of the user's code (named by the user's own file and line, see
`seq.registry.loader`) and drops seq's own, which say nothing about what the user should fix.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path

from seq.authoring.env_contract import ContractError
from seq.record.episode import BENCHMARK, ERROR, INFRASTRUCTURE, POLICY, EpisodeResult
from seq.record.work import WorkItem

_PACKAGE = Path(__file__).parent.parent
SEQ_PACKAGES = tuple(dict.fromkeys((str(_PACKAGE), str(_PACKAGE.resolve()))))
SHELVES = tuple(str(Path(package) / "shelf") for package in SEQ_PACKAGES)
IMPORT_FAILED = "import_failed"
WORKER_DIED = "worker_died"
CIRCUIT_OPEN = "circuit_open"


def classify(error: BaseException, blamed: str) -> tuple[str, str]:
    """`(failure, ended_by)` of an episode that raised `error` while `blamed` (`policy` or
    `benchmark`) had the turn."""
    reason = getattr(error, "reason", None)
    if isinstance(reason, str) and reason.startswith("server_"):  # ServerUnreachable, ServerLost
        return INFRASTRUCTURE, reason
    if getattr(error, "kind", None) in ("protocol", "too_large"):  # the server speaks another language
        return INFRASTRUCTURE, "server_protocol"
    if isinstance(error, ImportError):
        return INFRASTRUCTURE, IMPORT_FAILED
    return blamed, "error"


def user_traceback(error: BaseException) -> str:
    """The traceback of `error` without seq's own frames (the last frame is always kept), so that
    the first frame shown is the user's; chained exceptions are trimmed the same way."""
    shown = traceback.TracebackException.from_exception(error)
    _trim(shown, set())
    return "".join(shown.format())


def _trim(exception: traceback.TracebackException, seen: set[int]) -> None:
    if id(exception) in seen:
        return
    seen.add(id(exception))
    frames = list(exception.stack)
    kept = [frame for frame in frames[:-1] if not _internal(frame.filename)] + frames[-1:]
    exception.stack = traceback.StackSummary.from_list(kept)
    for chained in (exception.__cause__, exception.__context__):
        if chained is not None:
            _trim(chained, seen)


def _internal(filename: str) -> bool:
    """A frame of seq itself (not of its shelf, whose benchmarks and policies are a user's code to
    read) or of Python's import machinery."""
    if filename.startswith(SHELVES):
        return False
    return filename.startswith(SEQ_PACKAGES) or filename.startswith("<frozen ")


def describe(error: BaseException, failure: str) -> str:
    """What an errored episode's `error` holds: for an infrastructure failure its reason in one
    line (then, for a failed import, where it was imported); else the user's traceback."""
    if isinstance(error, ContractError):
        return str(error)
    if failure != INFRASTRUCTURE:
        return user_traceback(error)
    line = f"{type(error).__name__}: {error}" if isinstance(error, ImportError) else str(error)
    first = line.strip().splitlines()[0] if line.strip() else type(error).__name__
    if isinstance(error, ImportError):
        return f"{first} (in the benchmark's environment)\n\n{user_traceback(error)}"
    return first


@dataclass(frozen=True)
class SetupFailed:
    """An arm whose worker setup raised (`@seq.setup`, `@seq.load`, loading a class, connecting to
    its server): every episode of it is that error; an import that failed, or a server that cannot
    be reached, is the infrastructure's failure (the episodes stay unfinished), else the
    benchmark's or the policy's own."""

    error: str
    failure: str
    ended_by: str = "error"

    @classmethod
    def from_exception(cls, error: BaseException, blamed: str) -> SetupFailed:
        failure, ended_by = classify(error, blamed)
        text = describe(error, failure)
        if failure != INFRASTRUCTURE:
            text = "the worker's setup failed, so no episode could run:\n" + text
        return cls(text, failure, ended_by)

    def result(self, item: WorkItem) -> EpisodeResult:
        return item.result(status=ERROR, ended_by=self.ended_by, error=self.error, failure=self.failure)


__all__ = [
    "BENCHMARK",
    "INFRASTRUCTURE",
    "POLICY",
    "SetupFailed",
    "classify",
    "describe",
    "user_traceback",
]
