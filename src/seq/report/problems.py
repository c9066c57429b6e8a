"""An eval's problems (episodes that errored or timed out, score hooks that raised), and the same
problem over many episodes told once: "10 episodes: RuntimeError: … (first at task T seed S)", with
one traceback instead of ten identical ones."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from seq.record.episode import EpisodeResult
from seq.record.groups import groups
from seq.record.states import EpisodeStatus

ERROR, TIMED_OUT, SCORE_ERROR = EpisodeStatus.ERROR, EpisodeStatus.TIMED_OUT, "score_error"
# not a failure: an episode whose policy sent actions holding NaN or an infinity (the engine's
# `nan_actions` metric counts both)
NAN_ACTIONS = "nan_actions"
NON_FINITE = "non_finite"  # a metric that is NaN or infinite in some episodes: one problem a metric
SHOWN_GROUPS = 6  # groups a non-finite metric's problem names before "and N more"


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
        if self.status == NON_FINITE:
            return self.summary  # counts its episodes itself
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
    """`3 episode error(s), 1 timeout(s), 0 score error(s)` (and `, 2 with NaN actions (or
    infinite ones)`, `, 1 metric(s) NaN or infinite` where any)."""
    statuses = (ERROR, TIMED_OUT, SCORE_ERROR, NAN_ACTIONS, NON_FINITE)
    counts = {status: sum(p.status == status for p in problems) for status in statuses}
    nan = f", {counts[NAN_ACTIONS]} with NaN actions (or infinite ones)" if counts[NAN_ACTIONS] else ""
    metrics = f", {counts[NON_FINITE]} metric(s) NaN or infinite" if counts[NON_FINITE] else ""
    return (
        f"{counts[ERROR]} episode error(s), {counts[TIMED_OUT]} timeout(s), "
        f"{counts[SCORE_ERROR]} score error(s){nan}{metrics}"
    )


def non_finite_problems(results: Sequence[EpisodeResult]) -> list[Problem]:
    """One problem for each metric that is NaN or infinite in some episode that counts (not an
    error): which values, in how many episodes of how many, the first, and the report's groups
    they fall in (whose interval for that metric is then no number, or is left out). Metrics in
    the order they first occur."""
    counted = [r for r in results if r.status != ERROR]
    bad: dict[str, list[EpisodeResult]] = {}
    for result in counted:
        for name, value in result.metrics.items():
            if not math.isfinite(value):
                bad.setdefault(name, []).append(result)
    if not bad:
        return []
    table = groups(counted)
    problems = []
    for name, members in bad.items():
        kinds: dict[str, int] = {}
        for result in members:
            kind = _spelled(result.metrics[name])
            kinds[kind] = kinds.get(kind, 0) + 1
        values = " and ".join(f"{kind} in {_episodes(count)}" for kind, count in kinds.items())
        ids = {id(r) for r in members}
        touched = [_group_name(key) for key, group in table.items() if any(id(r) in ids for r in group)]
        named = ", ".join(touched[:SHOWN_GROUPS])
        if len(touched) > SHOWN_GROUPS:
            named += f" and {len(touched) - SHOWN_GROUPS} more"
        first = members[0]
        arm = f" arm {first.arm}" if first.arm else ""
        message = (
            f"metric {name} is {values} of {len(counted)} (groups {named}; first at task "
            f"{first.task} seed {first.seed}{arm})"
        )
        problems.append(Problem(f"metric {name}", NON_FINITE, message, arm=first.arm))
    return problems


def _spelled(value: float) -> str:
    return "NaN" if math.isnan(value) else "inf" if value > 0 else "-inf"


def _episodes(count: int) -> str:
    return f"{count} episode" + ("" if count == 1 else "s")


def _group_name(key: tuple[str, str, str]) -> str:
    """`all`, `suite easy`, `task near` (and ` of arm B` where the eval has arms)."""
    arm, kind, name = key
    label = name if kind == "overall" else f"{kind} {name}"
    return label + (f" of arm {arm}" if arm else "")
