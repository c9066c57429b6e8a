"""What the security tests share: a record with a finished eval, edited as an attacker would edit
one (or as a record made elsewhere and merged could hold), and `seq ui` served for real."""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import seq

VICTIM = "ev-victim"
SECRET = "TOP-SECRET-CONTENTS"


def finished_eval(toy_file: Path, eval_id: str = VICTIM) -> str:
    """A finished eval of the toy benchmark in $SEQ_HOME's record; returns its one episode's item."""
    seq.deploy(toy_file)
    seq.eval.run("line-controller", benchmark="line", tasks=["near"], seeds=[0], envs=1, eval_id=eval_id)
    return "near|seed=0"


def edit(record: Path, sql: str, *args: object) -> None:
    """Change the record behind seq's back, as a person with the file (or a merged record) can."""
    db = sqlite3.connect(record)
    with db:
        db.execute(sql, args)
    db.close()


def name_artifacts(record: Path, eval_id: str, **artifacts: str) -> None:
    edit(record, "UPDATE episodes SET artifacts=? WHERE eval_id=?", json.dumps(artifacts), eval_id)


def outside_secret(tmp_path: Path) -> Path:
    """A file outside SEQ_HOME that nothing seq does may read, copy, serve or delete."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(SECRET)
    return secret


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def console(*flags: str) -> Iterator[int]:
    """`seq ui` in its own process, serving; yields its port."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "ui", "--port", str(port), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while get(port, "/")[0] is None:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"seq ui did not start: {server.stdout.read() if server.stdout else ''}")
            time.sleep(0.2)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def get(port: int, path: str, host: str | None = None) -> tuple[int | None, bytes]:
    """(status, body) of a GET with the `Host` header given (default 127.0.0.1:PORT); (None, b"")
    while nothing listens."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", f"127.0.0.1:{port}" if host is None else host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    except OSError:
        return None, b""
    finally:
        connection.close()
