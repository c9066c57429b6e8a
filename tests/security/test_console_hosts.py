"""`seq ui` answers only the hosts it was bound for: a web page that points a name of its own at
127.0.0.1 (DNS rebinding) sends that name as `Host`, and is refused; loopback names and the
names given with `--allow-host` are answered."""

from __future__ import annotations

from pathlib import Path

import pytest
from attacks import console, finished_eval, get
from conftest import refused_in_one_line, run_cli

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


def test_a_request_for_another_host_is_refused(toy_file: Path):
    finished_eval(toy_file)
    with console("--allow-host", "devbox.local") as port:
        for host in (
            "attacker.example",
            f"attacker.example:{port}",
            "127.0.0.1.attacker.example",
            "",
            "[::1",
        ):
            status, body = get(port, "/", host=host)
            assert status == 400, host
            assert b"answers only for" in body and b"ev-victim" not in body
        assert get(port, "/evals/ev-victim/report.json", host="attacker.example")[0] == 400
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}", "devbox.local"):
            status, body = get(port, "/", host=host)
            assert status == 200 and b"ev-victim" in body, host


def test_allow_host_takes_a_host_name_only(toy_file: Path):
    refused_in_one_line(run_cli("ui", "--allow-host", "evil.example/path"), "--allow-host", "host name")
