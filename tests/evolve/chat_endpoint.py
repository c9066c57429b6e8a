"""A fake OpenAI-compatible chat endpoint for the evolve critics' tests: a real HTTP server on a
real socket, answering `/v1/chat/completions` with whatever the test's handler decides."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def chat_reply(model: str, content: str) -> JSONResponse:
    """A chat completion whose one message says `content`."""
    return JSONResponse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


@contextlib.contextmanager
def chat_endpoint(completions: Callable[[Request], Awaitable[JSONResponse]]) -> Iterator[str]:
    """Serve `completions` at a free local port; yields the endpoint's base URL (`…/v1`)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(5)
