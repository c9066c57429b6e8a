"""What an eval is asked to do: one dataclass that the options of `seq eval run` are generated
from, so that an option is declared once, with one default and one help line. `seq.eval.run` and
`seq.eval.dry_run` spell its fields out as typed keyword parameters, for editors and type
checkers; a test keeps their names, types and defaults the same as the fields'.

Each field carries its help text and how the command line spells it (`Cli`, in the field's
metadata; `cli=None`: Python only, such as `arms=[seq.Arm(...)]`). The command line turns its text
into the Python value by the field's `Cli.kind`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import MISSING, Field, dataclass, field, fields
from numbers import Integral
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import check_eval_id
from seq.record.states import PolicyProtocol

ENGINES = ("local", "ray")
SEQUENTIAL_TRIALS = 10  # trials at most, when --sequential is given and --trials is not
# what a --resume or --rerun-failed takes: where and how its work runs, not what it is (the eval's own)
TAKEN_BY_A_CONTINUATION = (
    "envs", "engine", "address", "verbose", "report_to", "save", "shard_id", "num_shards",
    "requeue_unhealthy", "resume", "rerun_failed",
)  # fmt: skip


@dataclass(frozen=True)
class Cli:
    """How a request field is spelled on the command line.

    `kind`: `value` (one value of the field's type), `flag` (`--x/--no-x`), `list` (comma-separated
    or repeated), `seeds` (`0,1,2` or `0-9`), `params` (`NAME=VALUE`, repeated), `sweep`
    (`NAME=V1,V2`, repeated), `argument` (positional). `flags`: default `--field-name`.
    `shown`: the default as help shows it, where the value itself (None) says nothing.
    """

    kind: str = "value"
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    shown: str | None = None

    def spellings(self, name: str) -> tuple[str, ...]:
        return self.flags or ("--" + name.replace("_", "-"),)


def option(default: Any, help: str, cli: Cli | None = Cli()) -> Any:
    """A request field: its default, one line of help, and its command-line spelling."""
    return field(default=default, metadata={"help": help, "cli": cli})


def help_of(item: Field) -> str:
    return item.metadata["help"]


def cli_of(item: Field) -> Cli | None:
    return item.metadata["cli"]


def default_of(item: Field) -> Any:
    return item.default if item.default is not MISSING else None


@dataclass(frozen=True)
class EvalRequest:
    """The arguments of `seq.eval.run` and `seq eval run`, with their defaults (see there)."""

    policy: Any = option(
        None,
        "A policy name, NAME@vN or built-in (metaworld-expert, random …); in Python also a "
        "@seq.policy class or object.",
        Cli("argument", metavar="POLICY"),
    )
    benchmark: Any = option(
        None,
        "A benchmark name or NAME@vN (in Python also a class).",
        Cli(flags=("--benchmark", "-b"), metavar="NAME"),
    )
    adapter: Any = option(
        None, "An adapter NAME or NAME@vN between the benchmark and every policy.", Cli(metavar="NAME")
    )
    suites: Sequence[str] | None = option(
        None,
        "Suites of the benchmark (comma-separated or repeated).",
        Cli("list", ("--suite",), "NAME", "its first"),
    )
    tasks: Sequence[str] | None = option(
        None, "Only these tasks (comma-separated or repeated).", Cli("list", metavar="NAME", shown="all")
    )
    seeds: Sequence[int] | None = option(
        None, "Seeds, such as 0,1,2 or 0-9.", Cli("seeds", metavar="SEEDS", shown="the benchmark's")
    )
    max_steps: int | None = option(
        None, "Step limit of every episode.", Cli(metavar="N", shown="the benchmark's")
    )
    timeout_s: float | None = option(
        None,
        "Wall-clock cap of every episode in seconds: past it the episode ends as timed out.",
        Cli(metavar="S", shown="the benchmark's"),
    )
    trials: int | None = option(
        None,
        f"Episodes per condition; with --sequential, at most this many ({SEQUENTIAL_TRIALS} if not given).",
        Cli(metavar="N", shown="1"),
    )
    params: Mapping[str, Any] | None = option(
        None,
        "NAME=VALUE for a declared parameter (noise=0.3, policy.noise, benchmark.x, "
        "eval.steps_per_query); repeatable.",
        Cli("params", ("--param",), "NAME=VALUE"),
    )
    record: str | None = option(
        None,
        "Videos: all, first (each task's first seed) or none.",
        Cli(metavar="WHICH", shown="the benchmark's render="),
    )
    trajectories: bool = option(False, "Keep every episode's steps.", Cli("flag"))
    traces: bool = option(
        False, "Keep every episode's compact trace (low-dim obs, actions, info, contacts).", Cli("flag")
    )
    save: bool = option(
        True, "Keep the eval in the record (--no-save: a scratch record; shards a fixed share).", Cli("flag")
    )
    report_to: Sequence[str] | None = option(
        None, "Mirror the report's metrics to wandb or trackio.", Cli("list", metavar="NAME")
    )
    vs: Any = option(None, "A second policy, run on the same episodes and compared.", Cli(metavar="POLICY"))
    vs_params: Mapping[str, Any] | None = option(
        None, "NAME=VALUE for the --vs policy; repeatable.", Cli("params", ("--vs-param",), "NAME=VALUE")
    )
    sweep: Mapping[str, Sequence[Any]] | None = option(
        None, "NAME=V1,V2,…: one arm per value; repeatable.", Cli("sweep", metavar="NAME=VALUES")
    )
    arms: Sequence[Any] | None = option(
        None, "The arms, as seq.Arm(policy, params, name) (instead of policy, vs and sweep).", None
    )
    threshold: float = option(0.05, "Equivalence margin of the comparisons.", Cli(metavar="X"))
    sequential: bool = option(False, "Two arms: stop as soon as the sequential test decides.", Cli("flag"))
    alpha: float = option(0.05, "With --sequential: the test's level.", Cli(metavar="X"))
    looks: int = option(5, "With --sequential: looks at the pairs, at most.", Cli(metavar="N"))
    metric: str = option("success", "With --sequential: the metric the test decides on.", Cli(metavar="NAME"))
    envs: int | None = option(None, "Worker processes.", Cli(metavar="N", shown="one per core"))
    envs_per_worker: int | None = option(
        None,
        "Episodes each worker runs side by side, their acts sent together.",
        Cli(metavar="N", shown="a seq server: up to 64, as memory allows; else 1"),
    )
    engine: str = option(
        "local", "Where the workers run: local (processes here) or ray (Ray actors).", Cli(metavar="NAME")
    )
    address: str | None = option(
        None, "With --engine ray: auto, or ray://host:port.", Cli(metavar="URL", shown="a local Ray")
    )
    allow_cpu: bool = option(
        False, "Run a benchmark that declares a gpu= card this machine lacks on the CPU.", Cli("flag")
    )
    verbose: bool = option(
        False,
        "Also print what the benchmark's and the policy's processes print (seq eval logs keeps it).",
        Cli("flag", ("--verbose", "-v")),
    )
    serve: bool = option(
        False, "Serve each arm's policy (a batching websocket server) to every worker.", Cli("flag")
    )
    max_batch_size: int | None = option(
        None,
        "With --serve: the largest batch.",
        Cli(metavar="N", shown="workers × --envs-per-worker (1 unless given)"),
    )
    max_wait_ms: float = option(10.0, "With --serve: the longest wait for a batch.", Cli(metavar="MS"))
    policy_url: str | None = option(
        None, "A policy server already running (ws://…), used instead of POLICY.", Cli(metavar="URL")
    )
    policy_protocol: str = option("seq", "Its protocol: seq, openpi or vla-eval.", Cli(metavar="NAME"))
    policy_name: str | None = option(
        None,
        "Record the --policy-url server as this policy.",
        Cli(metavar="NAME", shown="its own name, or one from its greeting and URL"),
    )
    image_encoding: str = option(
        "raw", "How a served policy is sent images: raw, jpeg, png (vla-eval).", Cli(metavar="NAME")
    )
    eval_id: str | None = option(
        None, "The eval's id, shared by its shards.", Cli(metavar="ID", shown="a new one")
    )
    shard_id: int | None = option(
        None, "With --eval-id: this process's shard, 0 … num-shards − 1.", Cli(metavar="K")
    )
    num_shards: int | None = option(None, "With --eval-id: how many shards share the eval.", Cli(metavar="N"))
    requeue_unhealthy: bool = option(False, "An unhealthy shard hands its items to the others.", Cli("flag"))
    resume: str | None = option(
        None, "Run only the unfinished episodes of this eval.", Cli(metavar="EVAL_ID")
    )
    rerun_failed: str | None = option(
        None,
        "Run this eval's errored episodes again as new attempts (and its unfinished ones).",
        Cli(metavar="EVAL_ID"),
    )

    @property
    def planned_trials(self) -> int:
        """`trials`, or its default: 1, or with `sequential` the most the test may use."""
        if self.trials is not None:
            return self.trials
        return SEQUENTIAL_TRIALS if self.sequential else 1

    @property
    def shard(self) -> tuple[int, int] | None:
        """(K, N) when this process runs shard K of N."""
        if self.shard_id is None and self.num_shards is None:
            return None
        return (self.shard_id or 0, self.num_shards or 1)

    def check(self) -> None:
        """What can be refused before anything is resolved or stored."""
        if self.engine not in ENGINES:
            raise SeqInputError(f"--engine {self.engine}: expected {' or '.join(ENGINES)}.")
        if self.policy_protocol not in tuple(PolicyProtocol):
            raise SeqInputError(
                f"--policy-protocol {self.policy_protocol}: expected {', '.join(PolicyProtocol)}."
            )
        if self.eval_id is not None:
            check_eval_id(self.eval_id, "--eval-id")
        if self.shard is not None and self.eval_id is None and self.save:
            raise SeqInputError("--shard-id needs --eval-id ID, the id every shard of the eval shares.")
        if self.shard is not None:
            from seq.engine.shards import Shard

            Shard(*self.shard)  # a shard that cannot be is refused before its eval is stored
        for name in ("suites", "tasks", "seeds"):
            given = getattr(self, name)
            if isinstance(given, Sized) and not isinstance(given, str) and len(given) == 0:
                flag = "--suite" if name == "suites" else f"--{name}"
                raise SeqInputError(
                    f"{flag} is empty; give at least one (or leave {flag} out for the benchmark's own)."
                )
        if self.resume is not None and not self.save:
            raise SeqInputError("--no-save keeps no record, so there is nothing to --resume.")
        if self.rerun_failed is not None and not self.save:
            raise SeqInputError("--no-save keeps no record, so there is nothing to --rerun-failed.")
        if self.rerun_failed is not None and self.resume is not None:
            raise SeqInputError(
                "--rerun-failed EVAL_ID also runs the eval's unfinished episodes; give it without --resume."
            )
        if self.continued is not None:
            self._check_continuation()

    def _check_continuation(self) -> None:
        """A resume runs the eval with the arguments it was stored with: an option it would not
        take is refused, not silently dropped."""
        flag = "--resume" if self.resume is not None else "--rerun-failed"
        for item in request_fields():
            if item.name not in TAKEN_BY_A_CONTINUATION and getattr(self, item.name) != default_of(item):
                raise SeqInputError(
                    f"{flag} EVAL_ID runs the eval with the arguments it was stored with, so "
                    f"--{item.name.replace('_', '-')} is not taken with it (--envs, --engine and "
                    "--address are)."
                )

    @property
    def continued(self) -> str | None:
        """The eval this request continues (`resume` or `rerun_failed`), if any."""
        return self.resume if self.resume is not None else self.rerun_failed


def request_fields() -> tuple[Field, ...]:
    return fields(EvalRequest)


def _is_integer(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def request_of(arguments: Mapping[str, Any]) -> EvalRequest:
    """The request of a call whose keyword parameters are the request's fields (`seq.eval.run`,
    `seq.eval.dry_run`), from its `locals()`: the other arguments are left out."""
    given = {item.name: arguments[item.name] for item in request_fields()}
    for name in ("suites", "tasks"):  # one name given alone, not its letters
        if isinstance(given[name], str):
            given[name] = [given[name]]
    seeds = given["seeds"]
    if _is_integer(seeds):
        given["seeds"] = [int(seeds)]
    elif seeds is not None:
        if isinstance(seeds, str) or not isinstance(seeds, Iterable):
            seeds = None
        else:
            seeds = list(seeds)
            if not all(_is_integer(seed) for seed in seeds):
                seeds = None
        if seeds is None:
            raise SeqInputError(
                f"seeds={given['seeds']!r}: expected seeds as integers, such as range(10) or [0, 3]."
            )
        given["seeds"] = [int(seed) for seed in seeds]
    return EvalRequest(**given)


# The sections of `seq eval run --help`, in order; each field of `EvalRequest` in one of them.
HELP_GROUPS = {
    "What to run": (
        "policy",
        "benchmark",
        "adapter",
        "suites",
        "tasks",
        "seeds",
        "max_steps",
        "timeout_s",
        "trials",
        "params",
    ),
    "What to keep": ("record", "trajectories", "traces", "save", "report_to"),
    "Arms and their comparison": (
        "vs",
        "vs_params",
        "sweep",
        "arms",
        "threshold",
        "sequential",
        "alpha",
        "looks",
        "metric",
    ),
    "Where it runs": ("envs", "envs_per_worker", "engine", "address", "allow_cpu", "verbose"),
    "Serving": (
        "serve",
        "max_batch_size",
        "max_wait_ms",
        "policy_url",
        "policy_protocol",
        "policy_name",
        "image_encoding",
    ),
    "Shards and resuming": (
        "eval_id",
        "shard_id",
        "num_shards",
        "requeue_unhealthy",
        "resume",
        "rerun_failed",
    ),
}


def help_group(name: str) -> str:
    return next(group for group, names in HELP_GROUPS.items() if name in names)
