"""MetaWorld's own expert, inline and served over seq's, openpi's and vla-eval's protocols, gives
the same rows on every MT10 task: the experts write into their observation, so a served policy
must get an array it may write into, as an inline one does."""

from __future__ import annotations

from dataclasses import replace

import pytest
from serving_helpers import rows

import seq
from seq.authoring.benchmark import spec_of
from seq.engine.episode import EpisodeRunner
from seq.record.store import Store, WorkItem
from seq.registry.deploy import load_version, resolve
from seq.serving import connect, serve
from seq.serving.inline import InlinePolicy

pytest.importorskip("metaworld")

SEEDS = range(3)
MAX_STEPS = 100  # every expert episode that succeeds here does so within 100 steps


def _items(spec) -> list[WorkItem]:
    conditions = [c for c in spec.suites["mt10"] if c.seed in SEEDS]
    return [WorkItem(c.key, i, replace(c, max_steps=MAX_STEPS), 0) for i, c in enumerate(conditions)]


def _state_of_payload() -> seq.Adapter:
    """On the server, for the peer protocols: their clients send a bare observation as the dict
    payload `{"state": obs, ...}`; the expert reads the array itself."""
    adapter = seq.Adapter()
    adapter.obs_transforms = [
        seq.tf.custom(
            lambda payload: payload["state"], label=seq.tf.lossy("the prompt goes as the instruction")
        )
    ]
    return adapter


def test_the_metaworld_expert_gives_the_same_rows_inline_and_served_on_every_protocol():
    store = Store()
    benchmark = load_version(resolve("benchmark", "metaworld", store))
    expert = load_version(resolve("policy", "metaworld-expert", store))
    spec = spec_of(benchmark)
    instance = benchmark()
    getattr(instance, spec.hooks["setup"])()  # one env per task, shared by every run below
    policy = expert()
    policy.load(None)
    runner = EpisodeRunner(instance, spec, InlinePolicy(policy, {}))
    items = _items(spec)
    inline = [runner.run(item) for item in items]
    assert {r.task for r in inline} == {c.task for c in spec.suites["mt10"]}
    assert len(inline) == 30 and all(r.status == "ok" for r in inline), [r.error for r in inline]
    assert sum(r.metrics["success"] for r in inline) >= 28  # the expert itself, not a broken input

    for protocol in ("seq", "openpi", "vla-eval"):
        adapter = None if protocol == "seq" else _state_of_payload()
        with serve("metaworld-expert", port=0, adapter=adapter) as server:
            with connect(server.url, protocol=protocol) as remote:
                runner.policy = remote
                served = [runner.run(item) for item in items]
        assert all(r.status == "ok" for r in served), (protocol, [r.error for r in served if r.error][:1])
        assert rows(served) == rows(inline), protocol
