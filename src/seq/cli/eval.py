"""`seq eval run / status / report / logs / prune-logs / ls / rm / compare / export / merge`."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

import seq.eval as api
from seq.cli import CANCELED, silence_broken_stdout
from seq.cli.help import SectionedHelp
from seq.cli.options import command_from, extra_option, split_list
from seq.cli.progress import EvalProgress
from seq.cli.tables import print_eval_table
from seq.engine.dispatch import WorkersFailed
from seq.engine.request import EvalRequest
from seq.engine.shards import ShardUnhealthy
from seq.errors import EvalCanceled, SeqInputError
from seq.record.store import RUNNING, Store
from seq.report.eval_report import Report
from seq.report.report_content import summary_csv_path
from seq.report.views import report_renderable

app = typer.Typer(help="Run evals and read their reports.", no_args_is_help=True)


def check_output_files(**paths: Path | None) -> None:
    """Each file an option names can be written (an existing folder, or a path under a file, is
    refused in one sentence) — checked before anything runs, so that no eval's report is lost to a
    typo in `--markdown`. An HTML file is refused where its extra is not installed."""
    if paths.get("html") is not None:
        from seq.report.html import require_html

        require_html()
    for flag, path in paths.items():
        if path is None:
            continue
        option = "--" + flag.replace("_path", "").replace("_", "-")
        if path.is_dir():
            raise SeqInputError(f"{option} {path}: that is a folder; give a file name.")
        parent = path.parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            raise SeqInputError(f"{option} {path}: {parent} is a file, not a folder.")
        if not os.access(parent, os.W_OK):
            raise SeqInputError(f"{option} {path}: {parent} is not writable.")


def _emit(
    report: Report,
    console: Console,
    as_json: bool,
    markdown: Path | None,
    csv_path: Path | None,
    html: Path | None = None,
) -> None:
    if as_json:
        print(report.to_json())
    else:
        console.print(report_renderable(report), crop=False)
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(report.to_markdown())
        console.print(f"wrote {markdown}", highlight=False)
    if csv_path is not None:
        report.to_csv(csv_path)
        console.print(f"wrote {csv_path} and {summary_csv_path(csv_path)}", highlight=False)
    if html is not None:
        report.to_html(html)
        console.print(f"wrote {html}", highlight=False)


def _emit_canceled(
    report: Report, console: Console, as_json: bool, markdown: Path | None, csv_path: Path | None
) -> None:
    """The report of a canceled eval, then exit 130. Where stdout is not a terminal (a pipe, a
    file, or a reader that Ctrl-C stopped too) the line saying how to finish it goes to stderr."""
    try:
        _emit(report, console, as_json, markdown, csv_path)
        sys.stdout.flush()
    except (BrokenPipeError, SystemExit):  # rich's console exits 1 on a broken pipe: not here
        silence_broken_stdout()
    if sys.stdout.isatty():
        raise typer.Exit(CANCELED)
    raise EvalCanceled(report.eval_id)


def _run(
    request: dict[str, Any],
    dry_run: bool,
    as_json: bool,
    markdown: Path | None,
    csv_path: Path | None,
    policy_token: str | None = None,
) -> None:
    check_output_files(markdown=markdown, csv_path=csv_path)
    console = Console(stderr=as_json)
    store = Store()
    policy = request.pop("policy")
    missing_policy = policy is None and request["policy_url"] is None
    continued = request["resume"] is not None or request["rerun_failed"] is not None
    if not continued and (missing_policy or request["benchmark"] is None):
        raise SeqInputError(
            "seq eval run needs POLICY (or --policy-url) and --benchmark NAME (or --resume EVAL_ID)."
        )
    if policy_token:  # the clients (here and in the workers) present it: seq.serving.transport
        os.environ["SEQ_SERVER_TOKEN"] = policy_token
    if dry_run:
        print_dry_run(api.dry_run(policy, store=store, **request), as_json)
        return
    canceled = False
    with EvalProgress(console, store, rerun_failed=request["rerun_failed"] is not None) as progress:
        try:
            report = api.run(
                policy, **request, on_start=progress.on_start, on_result=progress.on_result, store=store
            )
        except EvalCanceled as stopped:
            report, canceled = api.report(str(stopped), store), True
        except ShardUnhealthy as unhealthy:
            console.print(f"seq: shard stopped: {unhealthy}.", style="red", highlight=False)
            raise typer.Exit(3) from None
        except WorkersFailed as failed:  # no worker could start: one line, not a traceback
            Console(stderr=True).print(f"seq: the eval stopped: {failed}", style="red", highlight=False)
            raise typer.Exit(1) from None
    if canceled:  # Ctrl-C: the report of what ran, then the code every command exits with
        _emit_canceled(report, console, as_json, markdown, csv_path)
    _emit(report, console, as_json, markdown, csv_path)
    if report.partial and report.status == "running" and request["shard_id"] is not None:
        console.print("this shard has no work item left; the others are finishing the eval.", highlight=False)
    elif report.partial or report.all_errored:  # incomplete or failed: exit code 1
        raise typer.Exit(1)


# Options of the command line only: what to show or write (Python has `seq.eval.dry_run` and the
# `Report`'s methods for these).
OUTPUT_OPTIONS = [
    extra_option(
        "dry_run",
        False,
        "--dry-run/--no-dry-run",
        help="Show each arm's values and the work; run nothing.",
        annotation=bool,
        panel="What to run",
    ),
    extra_option(
        "policy_token",
        None,
        "--policy-token",
        help="The token the --policy-url server requires [default: $SEQ_SERVER_TOKEN].",
        annotation=str,
        panel="Serving",
        metavar="TOKEN",
    ),
    extra_option(
        "as_json", False, "--json", help="Print the report as JSON.", annotation=bool, panel="Output"
    ),
    extra_option(
        "markdown", None, "--markdown", help="Also write it as Markdown.", annotation=Path, panel="Output"
    ),
    extra_option(
        "csv_path", None, "--csv", help="Also write one row per episode.", annotation=Path, panel="Output"
    ),
]

run_command = app.command("run", cls=SectionedHelp)(
    command_from(
        EvalRequest,
        _run,
        OUTPUT_OPTIONS,
        "Evaluate POLICY on a benchmark; prints the eval id when it starts and the report when it ends.",
    )
)


@app.command("report")
def report_command(
    eval_id: str = typer.Argument(..., help="The eval's id."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    markdown: Path = typer.Option(None, "--markdown", help="Also write the report as Markdown."),
    csv_path: Path = typer.Option(None, "--csv", help="Also write one row per episode."),
    html: Path = typer.Option(None, "--html", help="Also write it as one HTML file with plots."),
    videos: Path = typer.Option(None, "--videos", help="Save the eval's recordings into this folder."),
    trajectories: Path = typer.Option(
        None, "--trajectories", help="Save every episode's steps (gzip JSONL)."
    ),
) -> None:
    """Every metric overall, per suite and per task, with n and a 95% interval."""
    check_output_files(markdown=markdown, csv_path=csv_path, html=html)
    report = api.report(eval_id)
    console = Console()
    _emit(report, console, as_json, markdown, csv_path, html)
    if videos is not None or trajectories is not None:
        from seq.record.artifacts import export_trajectories, export_videos

        if videos is not None:
            written = export_videos(report, videos)
            console.print(f"wrote {len(written)} video(s) to {videos}", highlight=False)
            _say_uncopied(console, report, "video", len(written))
        if trajectories is not None:
            written = export_trajectories(report, trajectories)
            console.print(f"wrote {len(written)} trajectories to {trajectories}", highlight=False)
            _say_uncopied(console, report, "trajectory", len(written))


def _say_uncopied(console: Console, report: Any, kind: str, written: int) -> None:
    """One sentence for the files the record names that were not copied (missing, or outside
    the eval's artifact folder, which is never read)."""
    named = sum(1 for episode in report.episodes if episode.artifacts.get(kind))
    if named > written:
        console.print(
            f"{named - written} {kind} file(s) the record names were not copied: each is missing "
            f"or lies outside the eval's folder $SEQ_HOME/artifacts/{report.eval_id}.",
            highlight=False,
        )


@app.command("status")
def status_command(
    eval_id: str = typer.Argument(..., help="The eval's id."),
    watch: bool = typer.Option(False, "--watch", help="Follow the eval to its end."),
    as_json: bool = typer.Option(False, "--json", help="Print the status as JSON."),
) -> None:
    """Episodes done of the total, and every metric so far with its interval."""
    store = Store()
    report = api.status(eval_id, store)
    if as_json:
        print(
            json.dumps(
                {
                    "id": report.eval_id,
                    "status": report.status,
                    "done": report.done,
                    "total": report.total,
                    "groups": report.to_dict()["groups"][:1],
                    "schema_version": report.schema_version,
                },
                indent=2,
            )
        )
        return
    if not watch:
        Console().print(report_renderable(report, compact=True), crop=False)
        return
    with Live(report_renderable(report, compact=True), refresh_per_second=2) as live:
        while report.status == RUNNING:
            time.sleep(1.0)
            report = api.status(eval_id, store)
            live.update(report_renderable(report, compact=True))


@app.command("logs")
def logs_command(
    eval_id: str = typer.Argument(..., help="The eval's id, or a unique prefix of it."),
    side: str = typer.Option(None, "--side", help="Only benchmark or policy lines."),
    arm: str = typer.Option(None, "--arm", help="Only this arm's lines."),
    instance: int = typer.Option(None, "--instance", help="Only this worker's (or server's) lines."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Stream lines until the eval ends."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object a line."),
) -> None:
    """What the eval's benchmark workers and policy servers printed, secrets masked."""
    lines = api.logs(eval_id, side=side, arm=arm, instance=instance, follow=follow)
    shown = 0
    for line in lines:
        shown += 1
        if as_json:
            print(json.dumps(line.to_dict()), flush=follow)
        else:
            print(f"[{line.source}] {line.text}", flush=follow)
    if not shown and not as_json:
        Console(stderr=True, highlight=False).print(
            "no lines: nothing printed them, or the eval ran in this process or on Ray (not kept), "
            "or its logs are past their retention (SEQ_LOG_RETENTION_DAYS, 7 by default)."
        )


@app.command("prune-logs")
def prune_logs_command(
    days: float = typer.Option(
        None, "--days", help="Keep logs this many days.  [default: $SEQ_LOG_RETENTION_DAYS, else 7]"
    ),
) -> None:
    """Delete eval logs past their retention (opening the record does this too)."""
    count = api.prune_logs(days)
    Console(highlight=False).print(f"pruned {count} log stream(s)")


@app.command("ls")
def ls_command(
    policy: str = typer.Argument(None, help="Only evals that ran this policy (in any arm)."),
    benchmark: str = typer.Option(None, "--benchmark", help="Only evals of this benchmark."),
    limit: int = typer.Option(50, "--limit", help="At most this many, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Evals, newest first, with their whole ids (any unique prefix of one names it)."""
    rows = api.ls(benchmark=benchmark, limit=limit, policy=policy)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        given = [
            f"{name} {value!r}" for name, value in (("policy", policy), ("benchmark", benchmark)) if value
        ]
        print(f"No evals of {' and '.join(given)}." if given else "No evals yet: `seq eval run` runs one.")
        return
    print_eval_table(rows)


@app.command("rm")
def rm_command(
    eval_ids: list[str] = typer.Argument(..., help="Eval ids, or unique prefixes of them."),
) -> None:
    """Remove evals: their episodes, scores and files. An eval whose runner is alive is refused."""
    console = Console(highlight=False)
    for removed in api.rm(*eval_ids):
        files = " and its files" if removed["files"] else ""
        what = f"{removed['status']}, {removed['episodes']} episodes"
        console.print(f"removed eval {removed['id']} ({what}){files}")


@app.command("compare")
def compare_command(
    first: str = typer.Argument(..., help="Eval A (the baseline), its id or a unique prefix."),
    second: str = typer.Argument(..., help="Eval B, of the same benchmark."),
    threshold: float = typer.Option(0.05, "--threshold", help="Equivalence margin."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    markdown: Path = typer.Option(None, "--markdown", help="Also write it as Markdown."),
    html: Path = typer.Option(None, "--html", help="Also write it as one HTML file with plots."),
) -> None:
    """Pair two evals' episodes and compare them: rates, B − A with its interval, McNemar, verdict."""
    check_output_files(markdown=markdown, html=html)
    _emit(api.compare(first, second, threshold), Console(), as_json, markdown, None, html)


@app.command("export")
def export_command(
    eval_id: str = typer.Argument(..., help="The eval's id, or a unique prefix of it."),
    output: Path = typer.Option(Path("."), "-o", "--output", help="The folder to write into."),
    report_to: list[str] = typer.Option(None, "--report-to", help="Also mirror metrics to wandb or trackio."),
    export_format: str = typer.Option(
        "seq", "--format", help="seq, or vla-eval (its <benchmark>_aggregate.json layout)."
    ),
) -> None:
    """Write the eval's episodes (JSONL), report (JSON) and unfinished work items."""
    mirrors = split_list(report_to, "--report-to") or ()
    files = api.export(eval_id, output, report_to=mirrors, format=export_format)
    for kind, path in files.items():
        Console().print(f"wrote {kind}: {path}", highlight=False)


@app.command("merge")
def merge_command(
    paths: list[Path] = typer.Argument(..., help="seq.db files of separate runs of the evals."),
) -> None:
    """Merge records of separate runs (shards on other machines) into this workspace's record."""
    counts = api.merge(*paths)
    Console().print("merged " + ", ".join(f"{n} {kind}" for kind, n in counts.items()), highlight=False)


def print_dry_run(plan: dict, as_json: bool) -> None:
    """Each arm's parameter values with where each came from, and the work the eval would do."""
    if as_json:
        print(json.dumps(plan, indent=2, default=str))
        return
    console = Console(highlight=False)
    adapter = f" + adapter {plan['adapter']}" if plan.get("adapter") else ""
    episodes = f"{plan['episodes']} episode{'s' if plan['episodes'] != 1 else ''}"
    console.print(f"dry run: {plan['benchmark']}{adapter}: {episodes}; nothing runs or is stored")
    workers = plan["workers"]
    line = f"{workers} worker{'s' if workers != 1 else ''}, {plan['envs_per_worker_why']}"
    console.print(textwrap.fill(line, 80, subsequent_indent="  ", break_on_hyphens=False), soft_wrap=True)
    if plan.get("suggestion"):
        hint = f"hint: {plan['suggestion']}"
        console.print(textwrap.fill(hint, 80, subsequent_indent="  ", break_on_hyphens=False), soft_wrap=True)
    for arm in plan["arms"]:
        table = Table(
            title=f"arm {arm['arm'] or 'A'}: {arm['policy']}", title_justify="left", header_style="bold"
        )
        for column in ("parameter", "value", "from"):
            table.add_column(column)
        for name, value in arm["parameters"].items():
            table.add_row(name, str(value["value"]), value["from"])
        console.print(table)
        console.print(f"{arm['episodes']} episodes, at most {arm['max_policy_queries']} policy queries")
