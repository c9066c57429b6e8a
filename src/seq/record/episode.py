"""The result of one episode, as recorded and as handed to a benchmark's `@seq.score`."""

from __future__ import annotations

from dataclasses import dataclass, field

from seq.record.states import EpisodeStatus, Failure

OK, ERROR, TIMED_OUT = EpisodeStatus.OK, EpisodeStatus.ERROR, EpisodeStatus.TIMED_OUT
# whose failure an `error` episode is (`EpisodeResult.failure`)
POLICY, BENCHMARK, INFRASTRUCTURE = Failure.POLICY, Failure.BENCHMARK, Failure.INFRASTRUCTURE

# An error text is kept to its first and last characters (a traceback's start, and its end: the
# exception's own line), so what a policy printed into an exception cannot grow the record, the
# report or the console beyond a few KB an episode.
ERROR_HEAD_CHARS = ERROR_TAIL_CHARS = 4_000
MAX_ERROR_CHARS = ERROR_HEAD_CHARS + ERROR_TAIL_CHARS


@dataclass
class EpisodeResult:
    """One finished episode: its condition, how it ended and the metrics of its last check.

    `metrics` always holds `steps`, `return` and `duration_s` next to the benchmark's own keys.
    `arm` names the policy arm that ran it (empty for an eval of one policy). `status` is `ok`,
    `timed_out` (past the condition's `timeout_s`) or `error` (`error` holds the traceback).
    `ended_by` says what stopped it: `check`, `env`, `max_steps`, `timeout` or `error`.
    `artifacts` names the files observers wrote for it (a video, a trajectory), by kind.
    `failure` says whose failure an `error` is: `policy`, `benchmark` or `infrastructure` (then
    `ended_by` names what went: `server_unreachable`, `server_lost`, `worker_died`, `import_failed`,
    `circuit_open`); None for an episode that did not error (or one recorded before seq told them
    apart). `attempt` numbers the runs of its work item (`--resume` after an infrastructure failure,
    `--rerun-failed`): the report counts the last.
    """

    item_id: str
    task: str
    seed: int
    trial: int = 0
    suite: str | None = None
    variation: str | None = None
    arm: str = ""
    status: str = OK
    metrics: dict[str, float] = field(default_factory=dict)
    steps: int = 0
    duration_s: float = 0.0
    cpu_s: float = 0.0
    queries: int = 0
    ended_by: str = ""
    error: str | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    attempt: int = 1
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.status != ERROR

    @property
    def infrastructure(self) -> bool:
        """Whether it did not run to an end for a reason outside the policy and the benchmark."""
        return self.failure == INFRASTRUCTURE

    @property
    def pair_key(self) -> str:
        """The item id without the arm: what pairs this episode with another arm's."""
        return pair_key(self.item_id, self.arm)

    @property
    def condition_key(self) -> str:
        """The pair key without its trial: the condition (task, seed, variation) whose trials are
        repeated measures of one start, the unit every interval and test clusters by."""
        return condition_key(self.pair_key)


def condition_key(key: str) -> str:
    """An item id or pair key without its `|trial=T` suffix, where it has one."""
    head, sep, tail = key.rpartition("|trial=")
    return head if sep and tail.isdigit() else key


def pair_key(item_id: str, arm: str) -> str:
    """An item id without its arm prefix (`arm/…`), where it has one."""
    return item_id[len(arm) + 1 :] if arm and item_id.startswith(arm + "/") else item_id


def bounded_error(text: str | None) -> str | None:
    """`text` as recorded: whole up to `MAX_ERROR_CHARS`, else its head and tail around one line
    that says how long it was (so a traceback keeps its exception line)."""
    if text is None or len(text) <= MAX_ERROR_CHARS:
        return text
    left_out = len(text) - MAX_ERROR_CHARS
    return (
        f"{text[:ERROR_HEAD_CHARS]}\n[… {left_out:,} characters left out of {len(text):,} …]\n"
        f"{text[-ERROR_TAIL_CHARS:]}"
    )
