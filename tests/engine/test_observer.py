"""Ended episodes whose observers still write files (`seq.engine.observer.Finishing`)."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from seq.engine import observer as observers
from seq.engine.observer import Finishing
from seq.record.episode import EpisodeResult


class Writer:
    """An observer's end, as a future the test resolves."""


def test_the_result_names_a_file_only_once_it_is_written():
    written: Future[dict[str, str]] = Future()
    finishing = Finishing(EpisodeResult("walk|seed=0", "walk", 0))
    finishing.add(Writer(), {"trajectory": "t.jsonl.gz"})
    finishing.add(Writer(), written)
    assert not finishing.done() and "video" not in finishing.result.artifacts
    threading.Timer(0.05, written.set_result, args=({"video": "v.mp4"},)).start()
    result = finishing.finish()  # waits for it
    assert result.artifacts == {"trajectory": "t.jsonl.gz", "video": "v.mp4"} and finishing.done()


def test_a_failed_file_is_an_observer_error_not_a_failed_episode():
    failed: Future[dict[str, str]] = Future()
    failed.set_exception(RuntimeError("recording failed, so this episode has no video"))
    finishing = Finishing(EpisodeResult("walk|seed=0", "walk", 0), errors=["Other.step: boom"])
    finishing.add(Writer(), failed)
    result = finishing.finish()
    assert result.status == "ok" and "video" not in result.artifacts
    assert result.artifacts["observer_errors"].startswith("Other.step: boom\nWriter.end: ")
    assert "recording failed" in result.artifacts["observer_errors"]


def test_a_file_not_written_in_time_is_given_up_and_not_named(monkeypatch):
    monkeypatch.setattr(observers, "FINISH_TIMEOUT_S", 0.05)
    stuck: Future[dict[str, str]] = Future()
    finishing = Finishing(EpisodeResult("walk|seed=0", "walk", 0))
    finishing.add(Writer(), stuck)
    result = finishing.finish()
    assert "not written within" in result.artifacts["observer_errors"] and "video" not in result.artifacts
    assert stuck.cancelled()  # the writer sees it was given up on, and deletes its file
