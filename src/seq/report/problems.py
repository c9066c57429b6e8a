"""An eval's problems (episodes that errored or timed out, score hooks that raised), and the same
problem over many episodes told once: "10 episodes: RuntimeError: … (first at task T seed S)", with
one traceback instead of ten identical ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ERROR, TIMED_OUT, SCORE_ERROR = "error", "timed_out", "score_error"
NAN_ACTIONS = "nan_actions"  # not a failure: an episode whose policy sent actions holding NaN


@dataclass(frozen=True)
class Problem:
    """An episode that errored or timed out (`task`, `seed`, `arm` say which), or a score hook that
    raised (`where` names the group)."""

    where: str
    status: str
    message: str
    task: str | None = None
    seed: int | None = None
    arm: str = ""
    failure: str | None = None  # whose failure an error is: policy or benchmark (None: not told)

    @property
    def summary(self) -> str:
        """What the problems grouped with this one share: the exception's own line (a traceback's
        last), or "timed out"."""
        if self.status == TIMED_OUT:
            return "timed out"
        lines = [line.strip() for line in self.message.strip().splitlines() if line.strip()]
        return lines[-1] if lines else "no message"

    @property
    def location(self) -> str:
        """`task T seed S` (and the arm, where there are several), or the score hook's group."""
        if self.task is None:
            return self.where
        arm = f" arm {self.arm}" if self.arm else ""
        return f"task {self.task} seed {self.seed}{arm}"


@dataclass(frozen=True)
class ProblemGroup:
    """Problems with one status and one summary: how many, which, and the first one in full."""

    status: str
    summary: str
    count: int
    first: Problem
    where: list[str]

    @property
    def label(self) -> str:
        """What the group is: `policy error`, `benchmark error`, `error`, `timed_out`, …"""
        failure = self.first.failure
        return f"{failure} error" if self.status == ERROR and failure else self.status

    @property
    def headline(self) -> str:
        """One line: `10 episodes: RuntimeError: boom (first at task near seed 0)`."""
        if self.status == SCORE_ERROR:
            noun = "score hook" if self.count == 1 else "score hooks"
            return f"{self.count} {noun}: {self.summary} (first: {self.first.location})"
        noun = "episode" if self.count == 1 else "episodes"
        if self.status == TIMED_OUT:
            return f"{self.count} {noun} timed out (first at {self.first.location}): {self.first.message}"
        return f"{self.count} {noun}: {self.summary} (first at {self.first.location})"

    @property
    def detail(self) -> str | None:
        """The first problem's traceback, where it has more to say than the headline."""
        message = self.first.message.rstrip()
        return message if self.status != TIMED_OUT and message.strip() != self.summary else None


def group_problems(problems: Sequence[Problem]) -> list[ProblemGroup]:
    """Problems grouped by status and summary, in the order each group first occurred."""
    groups: dict[tuple[str, str], list[Problem]] = {}
    for problem in problems:
        groups.setdefault((problem.status, problem.summary), []).append(problem)
    return [
        ProblemGroup(status, summary, len(members), members[0], [p.where for p in members])
        for (status, summary), members in groups.items()
    ]


def problem_counts(problems: Sequence[Problem]) -> str:
    """`3 episode error(s), 1 timeout(s), 0 score error(s)` (and `, 2 with NaN actions` where any)."""
    statuses = (ERROR, TIMED_OUT, SCORE_ERROR, NAN_ACTIONS)
    counts = {status: sum(p.status == status for p in problems) for status in statuses}
    nan = f", {counts[NAN_ACTIONS]} with NaN actions" if counts[NAN_ACTIONS] else ""
    return (
        f"{counts[ERROR]} episode error(s), {counts[TIMED_OUT]} timeout(s), "
        f"{counts[SCORE_ERROR]} score error(s){nan}"
    )
