"""At the open-files limit, a server's log once took 46,097 identical tracebacks (21.5 MB):
asyncio's accept retries multiply there, each logging its error. Repeated identical errors are
logged once, then counted, and the count is told when the server stops."""

from __future__ import annotations

import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import default_ctrl_c
from serving_helpers import deploy_all

from seq.serving.repeats import counting_repeats

HANDSHAKE = (
    b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def test_the_same_error_is_logged_once_then_counted(caplog):
    log = logging.getLogger("seq.serving")
    caplog.set_level(logging.WARNING)
    with counting_repeats():
        for _ in range(1000):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                log.error("a connection could not be accepted", exc_info=True)
        log.error("another error")
    messages = [r.getMessage() for r in caplog.records]
    assert messages[:2] == ["a connection could not be accepted", "another error"]
    assert len(messages) == 3 and messages[2].endswith("the same 999 times since it was last logged")
    assert "Too many open files" in messages[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sets the server's open-files limit")
def test_a_server_at_the_open_files_limit_keeps_its_log_short(tmp_path):
    deploy_all(tmp_path)

    def few_files() -> None:
        default_ctrl_c()  # a background job's children start with Ctrl-C ignored
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))

    # SIGUSR1 dumps the server's threads, should it not stop on Ctrl-C
    dump_on_usr1 = "import faulthandler, signal; faulthandler.register(signal.SIGUSR1, all_threads=True); "
    command = [
        sys.executable,
        "-c",
        dump_on_usr1 + "from seq.cli import main; main()",
        "policy",
        "serve",
        "dict-line",
    ]
    process = subprocess.Popen(
        [*command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=few_files,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        port = int(process.stdout.readline().rsplit(":", 1)[1])
        held: list[socket.socket] = []
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:  # many more connections than the server may open
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=1))
                held[-1].sendall(HANDSHAKE)
            except OSError:
                time.sleep(0.01)
            if len(held) > 200:
                for sock in held[:100]:
                    sock.close()
                del held[:100]
        process.send_signal(signal.SIGINT)
        try:
            _, log = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGUSR1)
            time.sleep(2)
            process.kill()
            _, log = process.communicate()
            pytest.fail(f"the server did not stop within 60 s of Ctrl-C; its threads:\n{log[-6000:]}")
    finally:
        process.kill()
        process.wait(10)
        for sock in held:
            sock.close()
    assert log.count("Traceback") <= 2 and len(log) < 20_000, log[:4000]
    assert "socket.accept() out of system resource" in log
    assert "times since it was last logged" in log
