"""`seq eval schedule / schedules / trend` and `seq scheduler run / install`."""

from __future__ import annotations

import json
import time
from typing import Any

import typer
from rich.console import Console

from seq.cli.options import parse_params, parse_seeds, split_list

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


def schedule_command(
    policy: str = typer.Argument(..., metavar="POLICY", help="A policy name (its latest version runs)."),
    benchmark: str = typer.Option(None, "--benchmark", "-b", metavar="NAME", help="The benchmark."),
    every: str = typer.Option(
        None, "--every", metavar="WHEN", help="daily, weekly, hourly, deploy, or a cron expression."
    ),
    trials: int = typer.Option(1, "--trials", metavar="N", help="Trials of each condition."),
    max_core_hours: float = typer.Option(
        None, "--max-core-hours", metavar="H", help="The schedule's budget: stop and skip once spent."
    ),
    off: bool = typer.Option(
        False, "--off", help="Switch the pairing's schedules off (only --every's, if given)."
    ),
    tasks: list[str] = typer.Option(None, "--tasks", metavar="NAMES", help="Tasks of the benchmark."),
    seeds: list[str] = typer.Option(None, "--seeds", metavar="SEEDS", help="Seeds: 0,1,2 or 0-9."),
    envs: int = typer.Option(None, "--envs", metavar="N", help="Worker processes of each run."),
    adapter: str = typer.Option(None, "--adapter", metavar="NAME", help="An adapter NAME or NAME@vN."),
    params: list[str] = typer.Option(None, "--param", metavar="NAME=VALUE", help="A declared parameter."),
) -> None:
    """Evaluate POLICY on a benchmark daily, weekly, on a cron expression or after each deploy."""
    from seq.scheduling import schedule

    options: dict[str, Any] = {
        "tasks": split_list(tasks),
        "seeds": parse_seeds(seeds),
        "envs": envs,
        "adapter": adapter,
        "params": parse_params(params) or None,
    }
    options = {key: value for key, value in options.items() if value is not None}
    rows = schedule(
        policy, benchmark, every, trials=trials, max_core_hours=max_core_hours, off=off, **options
    )
    console = Console(highlight=False)
    for row in rows:
        state = "on" if row.enabled else "off"
        console.print(f"schedule {row.label}, every {row.every} ({state})")
    if not off:
        console.print("seq scheduler run (or seq scheduler install) runs it when it is due.")


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
            f"  {metric['name']} {_interval(metric['value'], metric['low'], metric['high'])}"
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
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Every eval of POLICY on a benchmark by version and date, the metric with its interval.

    Then each version paired against the previous one on their shared episodes."""
    from seq.scheduling import trend

    found = trend(policy, benchmark, metric, threshold)
    if as_json:
        print(found.to_json())
        return
    console = Console(highlight=False)
    console.print(f"{found.policy} on {found.benchmark}: {found.metric} (95% interval)")
    console.print(f"  {'date':16}  {'ver':>4}  {'eval':13}  {found.metric[:17]:17}  {'n':>4}  source")
    partial = False
    for p in found.points:
        version = f"v{p.policy_version}"
        value = _interval(p.value, p.low, p.high) if p.value is not None else p.status
        if p.value is not None and p.status != "completed":
            value, partial = value + " !", True
        source = p.source.replace("schedule ", "").replace(" (", " ").rstrip(")")
        source += f" arm {p.arm}" if p.arm else ""
        console.print(
            f"  {_when(p.created_at):16}  {version:>4}  {p.eval_id:13}  {value:17}  {p.n:>4}  {source}"
        )
    if partial:
        console.print("  ! the eval did not complete: its interval is over the episodes that ran")
    for step in found.steps:
        head = f"v{step.baseline_version} -> v{step.version} ({step.baseline_eval} vs {step.eval_id})"
        if step.comparison is None:
            console.print(f"{head}: {step.note}")
            continue
        c = step.comparison
        d = c["difference"]
        p_value = f", p = {c['p_value']:.3g}" if c["p_value"] is not None else ""
        console.print(f"{head}:")
        console.print(
            f"  {c['n']} shared episodes, B - A = {d['difference']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
            f"{p_value}: {c['verdict']}"
        )


@scheduler_app.command("run")
def run_command(
    once: bool = typer.Option(False, "--once", help="Run what is due now, then exit (for a timer or cron)."),
    poll: float = typer.Option(30.0, "--poll", metavar="S", help="Look for new deploys at least this often."),
) -> None:
    """Run scheduled evals when they are due, in the foreground (for a service manager).

    Ctrl-C or SIGTERM stops it, canceling an eval it is running with what ran kept."""
    from seq.scheduling import run_scheduler

    console = Console(highlight=False)

    def say(line: str) -> None:
        console.print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}")

    if not once:
        say(f"seq scheduler: running due schedules, looking again at least every {poll:g} s")
    run_scheduler(poll_s=poll, once=once, say=say)


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
