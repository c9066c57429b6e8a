"""The runner ↔ worker channel: the serving plane's msgpack codec over a socket pair.

A worker may run another Python than the runner's (an image's virtual environment), so nothing
crosses as pickle: the few engine dataclasses that travel (`WorkerConfig`, `ArmConfig`, `WorkItem`,
`Condition`, `EpisodeResult`) go as tagged maps of plain values, everything else as the codec packs
it (numpy arrays as raw bytes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

from seq.authoring.conditions import Condition
from seq.engine.worker_config import ArmConfig, WorkerConfig
from seq.record.episode import EpisodeResult
from seq.record.work import WorkItem
from seq.serving.codec import pack, unpack

TAG = "__seq__"


def _message_types() -> dict[str, type]:
    return {cls.__name__: cls for cls in (WorkerConfig, ArmConfig, WorkItem, Condition, EpisodeResult)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {TAG: type(value).__name__, "fields": fields}
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value


def _typed(value: Any, types: dict[str, type]) -> Any:
    if isinstance(value, dict):
        if TAG in value and set(value) == {TAG, "fields"}:
            cls = types.get(value[TAG])
            if cls is None:
                raise ValueError(f"the worker channel carries no {value[TAG]!r} messages.")
            return cls(**{key: _typed(item, types) for key, item in value["fields"].items()})
        return {key: _typed(item, types) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item, types) for item in value]
    if isinstance(value, tuple):
        return tuple(_typed(item, types) for item in value)
    return value


class Channel:
    """One end of a runner ↔ worker socket pair: `send` and `recv` whole messages."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._types = _message_types()

    def send(self, message: Any) -> None:
        self.connection.send_bytes(pack(_plain(message)))

    def recv(self) -> Any:
        return _typed(unpack(self.connection.recv_bytes()), self._types)

    def poll(self, timeout: float = 0.0) -> bool:
        """Whether a message is waiting (or arrives within `timeout` seconds)."""
        return self.connection.poll(timeout)

    def fileno(self) -> int:  # for multiprocessing.connection.wait
        return self.connection.fileno()

    def close(self) -> None:
        self.connection.close()
