"""The runner ↔ worker channel carries the engine's messages through seq's codec, not pickle."""

from __future__ import annotations

import socket
from multiprocessing.connection import Connection

import numpy as np
import pytest

import seq
from seq.engine.wire import Channel
from seq.engine.worker_config import ArmConfig, WorkerConfig
from seq.record.store import WorkItem


@pytest.fixture
def channels():
    ours, theirs = socket.socketpair()
    left, right = Channel(Connection(ours.detach())), Channel(Connection(theirs.detach()))
    yield left, right
    left.close()
    right.close()


def test_engine_messages_cross_unchanged(channels):
    left, right = channels
    config = WorkerConfig(
        {"module": "seq.shelf.metaworld", "qualname": "MetaWorld"},
        {"a": ArmConfig({"module": "m", "qualname": "P"}, {"x": 1}, {"noise": 0.5}, steps_per_query=2)},
        [{"kind": "video", "items": ["reach|seed=0"]}],
    )
    condition = seq.Condition(task="reach", seed=3, max_steps=20, extra={"goal": [0.1, 0.2]})
    item = WorkItem("a/reach|seed=3", 7, condition, 1, "a")
    result = item.result(status="ok", metrics={"success": 1.0, "distance": np.float64(0.25)}, steps=9)
    for message in (config, item, ("done", result), ("ready", {"environment": {"python": "3.11"}})):
        left.send(message)
        assert right.recv() == message


def test_the_channel_refuses_what_the_codec_refuses(channels):
    left, _ = channels
    with pytest.raises(ValueError):
        left.send(("done", object()))
