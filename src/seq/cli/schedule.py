"""`seq eval schedule / schedules / trend` and `seq scheduler run / install`."""

from __future__ import annotations

import json
import textwrap
import time
from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from seq.cli.options import command_from, extra_option
from seq.engine.request import EvalRequest, default_of, request_fields
from seq.errors import SeqInputError
from seq.record.store import COMPLETED
from seq.scheduling.book import NOT_SCHEDULED

if TYPE_CHECKING:
    from seq.scheduling.trend import Trend, TrendStep

scheduler_app = typer.Typer(
    help="Run scheduled evals: in the foreground, or from a timer.", no_args_is_help=True
)


def _when(timestamp: float | None, seconds: bool = False) -> str:
    shown = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    return time.strftime(shown, time.localtime(timestamp)) if timestamp else "-"


def _hours(hours: float) -> str:
    return f"{hours * 3600:.1f} core-seconds" if hours < 0.01 else f"{hours:.3g} core-hours"


def _interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{value:.3g}"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def _schedule(request: dict[str, Any], every: str | None, max_core_hours: float | None, off: bool) -> None:
    from seq.scheduling import schedule

    policy, benchmark, trials = (request.pop(name) for name in ("policy", "benchmark", "trials"))
    if policy is None:
        raise SeqInputError("seq eval schedule needs POLICY, the name of a deployed policy.")
    defaults = {item.name: default_of(item) for item in request_fields()}
    options = {name: value for name, value in request.items() if value != defaults[name]}
    rows = schedule(
        policy,
        benchmark,
        every,
        trials=1 if trials is None else trials,
        max_core_hours=max_core_hours,
        off=off,
        **options,
    )
    console = Console(highlight=False)
    for row in rows:
        state = "on" if row.enabled else "off"
        console.print(f"schedule {row.label}, every {row.every} ({state})")
    if not off:
        console.print("seq scheduler run (or seq scheduler install) runs it when it is due.")


SCHEDULE_OPTIONS = [
    extra_option(
        "every",
        None,
        "--every",
        help="daily, weekly, hourly, deploy, or a cron expression.",
        annotation=str,
        panel="Schedule",
        metavar="WHEN",
    ),
    extra_option(
        "max_core_hours",
        None,
        "--max-core-hours",
        help="The schedule's budget: stop and skip once spent.",
        annotation=float,
        panel="Schedule",
        metavar="H",
    ),
    extra_option(
        "off",
        False,
        "--off",
        help="Switch the pairing's schedules off (only --every's, if given).",
        annotation=bool,
        panel="Schedule",
    ),
]

# The options of `seq eval run` a schedule takes: those `seq.schedule` takes, from one declaration.
schedule_command = command_from(
    EvalRequest,
    _schedule,
    SCHEDULE_OPTIONS,
    "Evaluate POLICY on a benchmark daily, weekly, on a cron expression or after each deploy.\n\n"
    "Each run is an eval of its latest version with the options of seq eval run given here.",
    leave_out=NOT_SCHEDULED - {"policy", "benchmark", "trials"},
)


def schedules_command(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Every schedule with its next run, its budget and its last result."""
    from seq.scheduling import schedules

    rows = schedules()
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return
    console = Console(highlight=False)
    if not rows:
        console.print("no schedules (seq eval schedule POLICY --benchmark B --every WHEN adds one).")
    for row in rows:
        state = "on" if row["enabled"] else "off"
        console.print(f"#{row['id']}  {row['policy']} on {row['benchmark']}  every {row['every']}  ({state})")
        nxt = row["next_run"]
        due = " (due now)" if row["due_now"] else ""
        when = nxt if isinstance(nxt, str) else _when(nxt, seconds=True) if nxt else "-"
        console.print(f"    next: {when}{due}; trials {row['trials']}")
        limit = row["max_core_hours"]
        budget = f" of {limit:g} core-hours" if limit is not None else " (no budget)"
        spent = " - spent, it runs no more" if row["budget_spent"] else ""
        console.print(f"    used: {_hours(row['spent_core_hours'])}{budget}{spent}")
        last = row["last_run"]
        if last is None:
            console.print("    last: none yet")
            continue
        metric = last["metric"]
        shown = (
            f"  {metric['name']} {_interval(metric['value'], metric['low'], metric['high'])} n={metric['n']}"
            if metric
            else ""
        )
        version = f" v{last['policy_version']}" if last["policy_version"] else ""
        ran = f"{_when(last['started_at'])} {last['status']}{version} {last['eval_id'] or ''}".rstrip()
        console.print(f"    last: {ran}{shown}")
        if last["note"]:
            console.print(f"          {last['note']}")


def trend_command(
    policy: str = typer.Argument(..., metavar="POLICY", help="A policy name."),
    benchmark: str = typer.Option(..., "--benchmark", "-b", metavar="NAME", help="The benchmark."),
    metric: str = typer.Option(
        None, "--metric", metavar="NAME", help="The metric [default: success, else the first]."
    ),
    threshold: float = typer.Option(
        0.05, "--threshold", metavar="X", help="Equivalence margin of the comparisons."
    ),
    evals: list[str] = typer.Option(
        [],
        "--eval",
        metavar="ID",
        help="An eval to stand for its version in the comparisons (repeat for several versions) "
        "[default: the one with the most episodes on all the benchmark's tasks].",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Every eval of POLICY on a benchmark by version and date, the metric with its interval.

    Then each version paired against the previous one on their shared episodes."""
    from seq.scheduling import trend

    found = trend(policy, benchmark, metric, threshold, evals=evals)
    if as_json:
        print(found.to_json())
        return
    console = Console(highlight=False)
    console.print(f"{found.policy} on {found.benchmark}: {found.metric} (95% interval)")
    console.print(_trend_table(found), crop=False)
    if any(p.value is not None and p.status != COMPLETED for p in found.points):
        console.print("an eval that did not complete: its interval is over the episodes that ran")
    if any(p.errors for p in found.points):
        console.print("errors k of n: episodes that errored, left out of the metric and its n")
    for step in found.steps:
        _print_step(console, step)


def _trend_table(found: Trend) -> Table:
    """One row per eval (per arm that ran the policy): ids, numbers and statuses whole; the
    episodes an eval lost to errors under its metric; the source folds under its own heading, so
    that the table reads at 80 columns."""
    table = Table(
        box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False, padding=(0, 1, 0, 0)
    )
    for column in ("date", "ver", "eval", found.metric, "n", "status"):
        table.add_column(column, no_wrap=True, justify="right" if column in ("ver", "n") else "left")
    table.add_column("source", overflow="fold", min_width=10)
    for p in found.points:
        source = p.source.replace("schedule ", "").replace(" (", " ").rstrip(")")
        value = _interval(p.value, p.low, p.high) if p.value is not None else "—"
        if 0 < p.conditions < p.n:  # trials repeat conditions: the interval counts conditions
            value += f"\n{p.conditions} conditions"
        table.add_row(
            time.strftime("%Y-%m-%d\n%H:%M", time.localtime(p.created_at)),
            f"v{p.policy_version}",
            p.eval_id,
            value + (f"\n[bold red]errors {p.errors} of {p.episodes}[/]" if p.errors else ""),
            str(p.n),
            p.status,
            f"{source}\narm {p.arm}" if p.arm else source,
        )
    return table


def _side(version: int, arm: str, given: dict[str, str]) -> str:
    """One side of a step: its version, its arm (where the eval ran several), the values given."""
    values = ", ".join(f"{name}={value}" for name, value in given.items())
    return (
        f"v{version}"
        + (f" arm {arm}" if arm else "")
        + (f" with {values}" if values else " with its defaults")
    )


def _left_out(step: TrendStep) -> list[str]:
    """A line for each reason episodes were left out of the step's comparison: how many, by task."""
    from seq.scheduling import trend_step

    why = {
        trend_step.NEWER_ERRORED: f"v{step.version} errored on",
        trend_step.OLDER_ERRORED: f"v{step.baseline_version} errored on",
        trend_step.BOTH_ERRORED: "both errored on",
        trend_step.ONLY_OLDER: f"only v{step.baseline_version}'s eval ran",
        trend_step.ONLY_NEWER: f"only v{step.version}'s eval ran",
    }
    lines = []
    for reason, keys in step.left_out.items():
        tasks = sorted(trend_step.by_task(keys).items(), key=lambda item: -item[1])
        shown = ", ".join(f"{task} {count}" for task, count in tasks[:4]) + (", …" if len(tasks) > 4 else "")
        lines.append(f"left out: {len(keys)} episode{'' if len(keys) == 1 else 's'} {why[reason]} ({shown})")
    return lines


def _print_step(console: Console, step: TrendStep) -> None:
    width = max(console.width, 40)
    console.print(f"v{step.baseline_version} -> v{step.version} ({step.baseline_eval} vs {step.eval_id}):")
    older, newer = step.given or [{}, {}]
    lines = [
        f"A: {_side(step.baseline_version, step.baseline_arm, older)}; "
        f"B: {_side(step.version, step.arm, newer)}"
    ]
    changed = "; ".join(f"{name} {a!r} -> {b!r}" for name, (a, b) in step.differing.items())
    lines.append(f"parameters that differ: {changed}" if changed else "every parameter the same")
    if step.comparison is None:
        lines.append(f"{step.note}.")
    else:
        c = step.comparison
        d = c["difference"]
        shared = f"{c['n']} shared episode{'' if c['n'] == 1 else 's'}"
        if c["conditions"] is not None and c["conditions"] < c["n"]:
            shared += f" ({c['conditions']} conditions, effective n {c['effective_n']:.3g})"
        if step.no_interval:
            interval = f"(no interval: {step.no_interval})"
        else:
            interval = f"[{d['low']:+.3f}, {d['high']:+.3f}]"
        p_value = f", p = {c['p_value']:.3g}" if c["p_value"] is not None else ""
        verdict = f": {c['verdict']}" if step.verdict == c["verdict"] else ""
        lines.append(f"{shared}, B - A = {d['difference']:+.3f} {interval}{p_value}{verdict}")
    if step.verdict is not None and (step.comparison is None or step.verdict != step.comparison["verdict"]):
        lines.append(f"verdict: {step.verdict}, left out of the comparison")
    lines += _left_out(step)
    lines += [f"{caveat}." for caveat in step.caveats]
    for line in lines:
        console.print(textwrap.fill(line, width, initial_indent="  ", subsequent_indent="    "))


@scheduler_app.command("run")
def run_command(
    once: bool = typer.Option(False, "--once", help="Run what is due now, then exit (for a timer or cron)."),
    poll: float = typer.Option(30.0, "--poll", metavar="S", help="Look for new deploys at least this often."),
) -> None:
    """Run scheduled evals when they are due, in the foreground (for a service manager).

    Ctrl-C or SIGTERM stops it, canceling an eval it is running with what ran kept."""
    from seq.cli.progress import EvalProgress
    from seq.record.store import Store
    from seq.scheduling import run_scheduler

    console = Console(highlight=False)
    progress = EvalProgress(Console(stderr=True), Store(), announce=False, bar=False)

    def say(line: str) -> None:
        console.print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}")

    if not once:
        say(f"seq scheduler: running due schedules, looking again at least every {poll:g} s")
    run_scheduler(poll_s=poll, once=once, say=say, on_start=progress.on_start, on_result=progress.on_result)


@scheduler_app.command("install")
def install_command(
    cron: bool = typer.Option(False, "--cron", help="A crontab line instead of a systemd user timer."),
    show: bool = typer.Option(False, "--print", help="Print what it would write; write nothing."),
    enable: bool = typer.Option(True, "--enable/--no-enable", help="systemd: enable and start the timer."),
) -> None:
    """Run due schedules every minute from a systemd user timer (or cron): they survive reboots."""
    from seq.scheduling import install_scheduler

    result = install_scheduler("cron" if cron else "systemd", write=not show, enable=enable)
    console = Console(highlight=False, soft_wrap=True)
    if cron:
        console.print(result["line"] if show else f"installed in your crontab:\n{result['line']}")
        return
    for path, text in result["files"].items():
        console.print(f"# {path}\n{text}" if show else f"wrote {path}")
    if result.get("error"):
        console.print(f"could not enable the timer: {result['error']}", style="yellow")
    elif not result["ran"]:
        console.print("to start it: " + " && ".join(result["commands"]))
    else:
        console.print(f"enabled: {result['commands'][-1]}")
