"""The console answers only the hosts it was bound for: a page elsewhere on the web that points a
name of its own at 127.0.0.1 (DNS rebinding) sends that name as `Host`, and is refused.

Loopback names and addresses are always taken; `seq ui --allow-host NAME` adds others (a name
an SSH tunnel or a proxy forwards under).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from seq.errors import SeqInputError

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*")
IPV6 = re.compile(r"[0-9a-f:.]+")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def host_of(header: str) -> str:
    """The host name of a `Host` header (`name[:port]` or `[v6][:port]`), lower-cased, without a
    trailing dot; empty where the header is not one."""
    text = header.strip().lower()
    if text.startswith("["):
        address, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not re.fullmatch(r":[0-9]{1,5}", rest)):
            return ""
        return address if IPV6.fullmatch(address) else ""
    name, _, port = text.partition(":")
    if port and not re.fullmatch(r"[0-9]{1,5}", port):
        return ""
    return name.rstrip(".")


def check_hosts(names: Iterable[str]) -> tuple[str, ...]:
    """The hosts the console answers: the loopback ones and `names` (each a plain host name or
    address, without a port), checked."""
    taken = list(LOOPBACK_HOSTS)
    for name in names:
        plain = name.strip().lower().rstrip(".").strip("[]")
        if not (HOST_NAME.fullmatch(plain) or (":" in plain and IPV6.fullmatch(plain))):
            raise SeqInputError(
                f"--allow-host {name!r}: expected a host name or address without a port (e.g. devbox.local)."
            )
        taken.append(plain)
    return tuple(dict.fromkeys(taken))


class HostCheck:
    """ASGI middleware: a request whose `Host` is not one of `hosts` gets 400 and one sentence."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = host_of(headers.get(b"host", b"").decode("latin-1"))
        if host in self.hosts:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = (
            "This console answers only for "
            + ", ".join(sorted(self.hosts))
            + " (seq ui --allow-host NAME adds a name); this request was for another host.\n"
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
