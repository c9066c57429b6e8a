"""`seq policy ls` (the twin of `seq.policies()`) and `seq policy serve`: a policy behind a
batching websocket server (the twin of `seq.serve`)."""

from __future__ import annotations

import json

import typer
from rich.console import Console

from seq.cli.options import parse_params
from seq.serving.launch import DEFAULT_MAX_MESSAGE_BYTES, serve

app = typer.Typer(help="List policies, and serve them to evals over websockets.", no_args_is_help=True)


@app.command("ls")
def ls_command(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Policies built in or registered: latest version, kind, parameters and latest eval."""
    from seq.cli.tables import print_policy_table
    from seq.registry.policies import policies

    rows = policies()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print_policy_table(rows)


@app.command("serve")
def serve_command(
    policy: str = typer.Argument(
        ..., help="A policy name, NAME@vN, or a built-in (random, metaworld-expert …)."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by default)."),
    port: int = typer.Option(8000, "--port", help="Port to listen on (0 picks a free one)."),
    max_batch_size: int = typer.Option(
        8, "--max-batch-size", help="Most requests handed to a batched infer."
    ),
    max_wait_ms: float = typer.Option(10.0, "--max-wait-ms", help="Longest wait for a batch to fill."),
    replicas: int = typer.Option(1, "--replicas", help="Policy instances, each computing in its own thread."),
    param: list[str] = typer.Option(
        None, "--param", help="NAME=VALUE for a declared parameter (repeatable)."
    ),
    max_message_bytes: int = typer.Option(
        DEFAULT_MAX_MESSAGE_BYTES, "--max-message-bytes", help="Largest frame a client may send."
    ),
    max_reply_bytes: int = typer.Option(
        None, "--max-reply-bytes", help="Largest reply, checked before computing (default: the above)."
    ),
    token: str = typer.Option(
        None,
        "--token",
        help="Require this token of every client; needed off loopback (default: $SEQ_SERVER_TOKEN).",
    ),
) -> None:
    """Serve POLICY until Ctrl-C: `seq` clients, openpi clients and `vla-eval run` can all use it."""
    console = Console(highlight=False)
    handle = serve(
        policy,
        host=host,
        port=port,
        max_batch_size=max_batch_size,
        max_wait_ms=max_wait_ms,
        replicas=replicas,
        params=parse_params(param),
        max_message_bytes=max_message_bytes,
        max_reply_bytes=max_reply_bytes,
        token=token,
    )
    meta = handle.metadata
    batching = (
        f"batches of up to {max_batch_size}, waiting at most {max_wait_ms:g} ms"
        if meta["batched"]
        else "one request at a time (its infer is not batched)"
    )
    console.print(f"serving {meta['policy']['label']} at {handle.url}", style="bold")
    console.print(f"  {replicas} replica(s); {batching}; GET /health, /stats, /config; Ctrl-C stops")
    try:
        handle.wait()
    except KeyboardInterrupt:
        pass
    finally:
        handle.close()
    stats = handle.stats()
    console.print(
        f"stopped: {stats['requests']} requests in {stats['batches']} batches "
        f"(sizes {stats['batch_size_histogram'] or '—'}), {stats['errors']} errors"
    )
