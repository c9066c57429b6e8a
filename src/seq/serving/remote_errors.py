"""What a served policy's client raises, so the episode loop can record a clear reason."""

from __future__ import annotations


class ServerUnreachable(RuntimeError):
    """The policy server could not be reached, or went away or stopped answering mid-episode.

    The episode that raised it is recorded as an error; the client reconnects (with backoff) at the
    next episode's start. `reason` is the machine-readable cause, `"server_unreachable"`.
    """

    reason = "server_unreachable"

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class ServerLost(ServerUnreachable):
    """The policy server went away, or stopped answering, during an episode (it was reached at the
    episode's start): `reason` is `"server_lost"`."""

    reason = "server_lost"


class ServerRefusedToken(ServerUnreachable):
    """The policy server requires a token and the client sent none or a wrong one (HTTP 401 at the
    websocket handshake). Not retried: trying again cannot help."""

    reason = "unauthorized"


class CodecError(ValueError):
    """A frame or a value that the codec refuses (bad bytes, an unsupported type or dtype, a frame
    over a limit)."""


class RemotePolicyError(RuntimeError):
    """The server answered with an error: the policy raised (its traceback is in the message), or
    it refused the request (a malformed or oversized frame, an undeclared parameter)."""

    def __init__(self, message: str, kind: str = "policy", remote_traceback: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.remote_traceback = remote_traceback


class MessageTooLarge(RemotePolicyError):
    """A frame larger than the server's `max_message_bytes`; it was not sent."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="too_large")
