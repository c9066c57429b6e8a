"""`seq ui` / `seq.console.serve`: the console on 127.0.0.1, served by uvicorn until stopped."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seq.console.hosts import check_hosts
from seq.errors import SeqInputError

HOST = "127.0.0.1"  # the console is local: never bound to another interface
DEFAULT_PORT = 8765


def _require() -> None:
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as missing:
        raise SeqInputError(
            f"seq ui needs the console extra ({missing.name} is not installed): pip install 'seq[console]'."
        ) from None


def create_app(
    record: str | Path | None = None, refresh_s: int | None = None, allow_hosts: Sequence[str] = ()
) -> Any:
    """The console's ASGI app over the record at `record` (default: `$SEQ_HOME/seq.db`); a page
    showing a running eval reloads itself every `refresh_s` seconds (default 5; 0: never). It
    answers requests for loopback names and addresses and for `allow_hosts`, and refuses others."""
    _require()
    from seq.console.app import REFRESH_S
    from seq.console.app import create_app as build

    if refresh_s is not None and not 0 <= refresh_s <= 86_400:
        raise SeqInputError(f"--refresh {refresh_s}: expected seconds from 0 (never) to 86400.")
    return build(record, REFRESH_S if refresh_s is None else refresh_s, check_hosts(allow_hosts))


def _check_port(port: int) -> None:
    if not 0 < port < 65536:
        raise SeqInputError(f"--port {port}: expected a port number from 1 to 65535.")
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError as error:
            raise SeqInputError(f"--port {port}: {HOST}:{port} is taken ({error.strerror}).") from None


def serve(
    port: int = DEFAULT_PORT,
    record: str | Path | None = None,
    on_ready: Any = None,
    refresh_s: int | None = None,
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve the console at http://127.0.0.1:PORT until interrupted; `on_ready(url)` is called
    once it listens, with its Ctrl-C handling in place (a Ctrl-C before that could land in an
    import still under way, where Python ignores it). Requests for a host
    other than loopback's and `allow_hosts` are refused (DNS rebinding)."""
    app = create_app(record, refresh_s, allow_hosts)
    _check_port(port)
    import uvicorn

    url = f"http://{HOST}:{port}/"
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", access_log=False)

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and on_ready is not None:
                on_ready(url)

    Server(config).run()
