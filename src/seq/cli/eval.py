"""`seq eval run / status / report / ls`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

import seq.eval as api
from seq.cli.options import parse_params, parse_seeds, parse_sweep, split_list
from seq.cli.progress import EvalProgress
from seq.engine.shards import ShardUnhealthy
from seq.errors import EvalCanceled
from seq.record.store import RUNNING, Store
from seq.report.report import Report
from seq.report.views import report_renderable

app = typer.Typer(help="Run evals and read their reports.", no_args_is_help=True)


def _emit(
    report: Report, console: Console, as_json: bool, markdown: Path | None, csv_path: Path | None
) -> None:
    if as_json:
        print(report.to_json())
    else:
        console.print(report_renderable(report))
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(report.to_markdown())
        console.print(f"wrote {markdown}", highlight=False)
    if csv_path is not None:
        report.to_csv(csv_path)
        console.print(f"wrote {csv_path}", highlight=False)


@app.command("run")
def run_command(
    policy: str = typer.Argument(
        None, help="A policy name, NAME@vN, or a built-in (metaworld-expert, random …)."
    ),
    benchmark: str = typer.Option(None, "--benchmark", "-b", help="A benchmark name or NAME@vN."),
    envs: int = typer.Option(None, "--envs", help="Worker processes [default: the cores]."),
    envs_per_worker: int = typer.Option(
        1, "--envs-per-worker", help="Episodes each worker runs side by side, their acts sent together."
    ),
    suite: list[str] = typer.Option(None, "--suite", help="A suite of the benchmark [default: its first]."),
    tasks: list[str] = typer.Option(None, "--tasks", help="Only these tasks (comma-separated or repeated)."),
    seeds: list[str] = typer.Option(None, "--seeds", help="Seeds, such as 0,1,2 or 0-9."),
    max_steps: int = typer.Option(None, "--max-steps", help="Step limit of every episode."),
    trials: int = typer.Option(1, "--trials", help="Episodes per condition."),
    param: list[str] = typer.Option(
        None, "--param", help="NAME=VALUE for a declared parameter (repeatable)."
    ),
    vs: str = typer.Option(None, "--vs", help="A second policy, run on the same episodes and compared."),
    vs_param: list[str] = typer.Option(None, "--vs-param", help="NAME=VALUE for the --vs policy."),
    sweep: list[str] = typer.Option(None, "--sweep", help="NAME=V1,V2,… : one arm per value (repeatable)."),
    threshold: float = typer.Option(0.05, "--threshold", help="Equivalence margin of the comparisons."),
    record: str = typer.Option(None, "--record", help="Videos: all | first (each task's first seed) | none."),
    trajectories: bool = typer.Option(False, "--trajectories", help="Keep every episode's steps."),
    sequential: bool = typer.Option(
        False, "--sequential", help="With --vs: stop as soon as the test decides."
    ),
    max_trials: int = typer.Option(
        None, "--max-trials", help="With --sequential: trials at most [default 10]."
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="With --sequential: the test's level."),
    engine: str = typer.Option("local", "--engine", help="local (processes here) or ray (Ray actors)."),
    serve: bool = typer.Option(
        False, "--serve", help="Serve the policy (batching websocket) to every worker."
    ),
    max_batch_size: int = typer.Option(
        None, "--max-batch-size", help="With --serve [default: the episodes at once]."
    ),
    max_wait_ms: float = typer.Option(10.0, "--max-wait-ms", help="With --serve: longest wait for a batch."),
    policy_url: str = typer.Option(None, "--policy-url", help="A policy server already running (ws://…)."),
    policy_protocol: str = typer.Option(
        "seq", "--policy-protocol", help="Its protocol: seq, openpi, vla-eval."
    ),
    policy_token: str = typer.Option(
        None, "--policy-token", help="The token that server requires (default: $SEQ_SERVER_TOKEN)."
    ),
    address: str = typer.Option(None, "--address", help="With --engine ray: auto, or ray://host:port."),
    allow_cpu: bool = typer.Option(
        False, "--allow-cpu", help="Run a benchmark that declares a gpu= card this machine lacks on the CPU."
    ),
    eval_id: str = typer.Option(None, "--eval-id", help="The eval's id, shared by its shards."),
    shard_id: int = typer.Option(None, "--shard-id", help="This process's shard, 0 … num-shards − 1."),
    num_shards: int = typer.Option(None, "--num-shards", help="How many shards share the eval."),
    requeue_unhealthy: bool = typer.Option(
        False, "--requeue-unhealthy", help="An unhealthy shard hands its items to the others."
    ),
    resume: str = typer.Option(None, "--resume", help="Run only the unfinished episodes of this eval."),
    adapter: str = typer.Option(
        None, "--adapter", help="An adapter NAME or NAME@vN between the benchmark and the policy."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show each arm's values and the work; run nothing."
    ),
    report_to: list[str] = typer.Option(None, "--report-to", help="Mirror metrics to wandb or trackio."),
    no_save: bool = typer.Option(False, "--no-save", help="Keep no record (shards: a fixed share each)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    markdown: Path = typer.Option(None, "--markdown", help="Also write the report as Markdown."),
    csv_path: Path = typer.Option(None, "--csv", help="Also write one row per episode."),
) -> None:
    """Evaluate POLICY on a benchmark; prints the eval id when it starts and the report when it ends."""
    console = Console(stderr=as_json)
    store = Store()
    if resume is None and ((policy is None and policy_url is None) or benchmark is None):
        from seq.errors import SeqInputError

        raise SeqInputError(
            "seq eval run needs POLICY (or --policy-url) and --benchmark NAME (or --resume EVAL_ID)."
        )
    if policy_token:  # the clients (here and in the workers) present it: seq.serving.transport
        os.environ["SEQ_SERVER_TOKEN"] = policy_token
    request = dict(
        benchmark=benchmark,
        envs=envs,
        envs_per_worker=envs_per_worker,
        suites=split_list(suite),
        tasks=split_list(tasks),
        seeds=parse_seeds(seeds),
        max_steps=max_steps,
        trials=(max_trials or 10) if sequential else trials,
        params=parse_params(param),
        vs=vs,
        vs_params=parse_params(vs_param, "--vs-param"),
        sweep=parse_sweep(sweep),
        threshold=threshold,
        record=record,
        trajectories=trajectories,
        sequential=sequential,
        alpha=alpha,
        serve=serve,
        max_batch_size=max_batch_size,
        max_wait_ms=max_wait_ms,
        policy_url=policy_url,
        policy_protocol=policy_protocol,
        eval_id=eval_id,
        adapter=adapter,
        allow_cpu=allow_cpu,
    )
    if dry_run:
        print_dry_run(api.dry_run(policy, store=store, **request), as_json)
        return
    with EvalProgress(console, store) as progress:
        try:
            report = api.run(
                policy,
                **request,
                engine=engine,
                address=address,
                shard=None if shard_id is None and num_shards is None else (shard_id or 0, num_shards or 1),
                requeue_unhealthy=requeue_unhealthy,
                resume=resume,
                report_to=split_list(report_to) or (),
                save=not no_save,
                on_start=progress.on_start,
                on_result=progress.on_result,
                store=store,
            )
        except EvalCanceled as canceled:
            report = api.report(str(canceled), store)
        except ShardUnhealthy as unhealthy:
            console.print(f"seq: shard stopped: {unhealthy}.", style="red", highlight=False)
            raise typer.Exit(3) from None
    _emit(report, console, as_json, markdown, csv_path)
    if report.partial and report.status == "running" and shard_id is not None:
        console.print("this shard has no work item left; the others are finishing the eval.", highlight=False)
    elif report.partial:
        raise typer.Exit(1)


@app.command("report")
def report_command(
    eval_id: str = typer.Argument(..., help="The eval's id."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    markdown: Path = typer.Option(None, "--markdown", help="Also write the report as Markdown."),
    csv_path: Path = typer.Option(None, "--csv", help="Also write one row per episode."),
    videos: Path = typer.Option(None, "--videos", help="Save the eval's recordings into this folder."),
    trajectories: Path = typer.Option(
        None, "--trajectories", help="Save every episode's steps (gzip JSONL)."
    ),
) -> None:
    """Every metric overall, per suite and per task, with n and a 95% interval."""
    report = api.report(eval_id)
    console = Console()
    _emit(report, console, as_json, markdown, csv_path)
    if videos is not None or trajectories is not None:
        from seq.record.artifacts import export_trajectories, export_videos

        if videos is not None:
            console.print(f"wrote {len(export_videos(report, videos))} video(s) to {videos}", highlight=False)
        if trajectories is not None:
            count = len(export_trajectories(report, trajectories))
            console.print(f"wrote {count} trajectories to {trajectories}", highlight=False)


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
                },
                indent=2,
            )
        )
        return
    if not watch:
        Console().print(report_renderable(report, compact=True))
        return
    with Live(report_renderable(report, compact=True), refresh_per_second=2) as live:
        while report.status == RUNNING:
            time.sleep(1.0)
            report = api.status(eval_id, store)
            live.update(report_renderable(report, compact=True))


@app.command("ls")
def ls_command(
    benchmark: str = typer.Option(None, "--benchmark", help="Only evals of this benchmark."),
    limit: int = typer.Option(50, "--limit", help="At most this many, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Evals, newest first."""
    rows = api.ls(benchmark=benchmark, limit=limit)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print_eval_table(rows)


def print_eval_table(rows: list[dict]) -> None:
    table = Table(header_style="bold")
    for column in ("id", "status", "benchmark", "policy", "episodes", "created"):
        table.add_column(column)
    for row in rows:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
        table.add_row(
            row["id"],
            row["status"],
            row["benchmark"],
            row["policy"],
            f"{row['done']}/{row['total']}",
            created,
        )
    Console().print(table)


@app.command("compare")
def compare_command(
    first: str = typer.Argument(..., help="Eval A (the baseline)."),
    second: str = typer.Argument(..., help="Eval B."),
    threshold: float = typer.Option(0.05, "--threshold", help="Equivalence margin."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    markdown: Path = typer.Option(None, "--markdown", help="Also write it as Markdown."),
) -> None:
    """Pair two evals' episodes and compare them: rates, B − A with its interval, McNemar, verdict."""
    _emit(api.compare(first, second, threshold), Console(), as_json, markdown, None)


@app.command("export")
def export_command(
    eval_id: str = typer.Argument(..., help="The eval's id."),
    output: Path = typer.Option(Path("."), "-o", "--output", help="The folder to write into."),
    report_to: list[str] = typer.Option(None, "--report-to", help="Also mirror metrics to wandb or trackio."),
) -> None:
    """Write the eval's episodes (JSONL), report (JSON) and unfinished work items."""
    for kind, path in api.export(eval_id, output, report_to=split_list(report_to) or ()).items():
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
    console.print(
        f"dry run: {plan['benchmark']}{adapter}: {plan['episodes']} episodes; nothing runs or is stored"
    )
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
