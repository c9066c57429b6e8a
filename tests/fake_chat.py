"""A real OpenAI-compatible chat server for tests: `POST /v1/chat/completions` over HTTP, in a thread.

It answers each call with the next sub-goal of a list (per robot, read from the prompt's last
line), after an optional delay, and keeps every request it was sent.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeChatServer:
    """`with FakeChatServer(["reach", "push"]) as chat:` serves at `chat.base_url` (`…/v1`)."""

    def __init__(self, goals: list[str], delay_s: float = 0.0, refuse_reasoning: bool = False) -> None:
        self.goals, self.delay_s, self.refuse_reasoning = goals, delay_s, refuse_reasoning
        self.requests: list[dict[str, Any]] = []
        self.calls: dict[str, int] = {}  # per prompt: how many answered
        self.answer_gate: threading.Event | None = None  # when set: every call waits for it
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                status, answer = server.answer(self.path, body, self.headers.get("Authorization"))
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up on a slow answer (its eval ended) is no error here

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(
        self, path: str, body: dict[str, Any], authorization: str | None
    ) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests.append({"path": path, "body": body, "authorization": authorization})
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        if self.refuse_reasoning and "reasoning" in body:
            return 400, {"error": {"message": "Unrecognized request argument supplied: reasoning"}}
        if self.answer_gate is not None:
            self.answer_gate.wait(60)
        if self.delay_s:
            time.sleep(self.delay_s)
        prompt = str(body["messages"][-1]["content"])
        with self.lock:
            count = self.calls[prompt] = self.calls.get(prompt, 0) + 1
        goal = self.goals[min(count, len(self.goals)) - 1]
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": goal}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def write_models(home: Any, base_url: str, name: str = "planner", **extra: Any) -> None:
    """Name `name` at `base_url` in `SEQ_HOME/models.toml`."""
    home.mkdir(parents=True, exist_ok=True)
    lines = [f"[models.{name}]", f'base_url = "{base_url}"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    (home / "models.toml").write_text("\n".join(lines) + "\n")
