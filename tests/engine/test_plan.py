"""plan(): conditions × trials → work items with stable ids; act_seed."""

from __future__ import annotations

import pytest

import seq
from seq.authoring.benchmark import spec_of
from seq.authoring.seeding import act_seed
from seq.engine.plan import plan


def _spec(**kwargs):
    kwargs.setdefault("conditions", seq.conditions(tasks=["reach", "push"], seeds=range(2)))

    @seq.benchmark("toy", **kwargs)
    class Toy(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return None

        @seq.check
        def check(self, env):
            return seq.Step(done=True)

    return spec_of(Toy)


def test_ids_stable_and_unique():
    items = plan(_spec())
    ids = [it.item_id for it in items]
    assert ids == ["reach|seed=0", "reach|seed=1", "push|seed=0", "push|seed=1"]
    assert [it.ordinal for it in items] == [0, 1, 2, 3]
    assert ids == [it.item_id for it in plan(_spec())]


def test_trials_multiply_and_suffix_ids():
    items = plan(_spec(), trials=3)
    assert len(items) == 12
    assert len({it.item_id for it in items}) == 12
    # trial-major: every prefix of the plan covers the conditions evenly
    assert [(it.item_id, it.trial) for it in items[:5]] == [
        ("reach|seed=0|trial=0", 0),
        ("reach|seed=1|trial=0", 0),
        ("push|seed=0|trial=0", 0),
        ("push|seed=1|trial=0", 0),
        ("reach|seed=0|trial=1", 1),
    ]


def test_arms_pair_up_by_condition_and_trial():
    items = plan(_spec(), trials=2, arms=["A", "B"])
    assert len(items) == 16
    assert [it.item_id for it in items[:2]] == ["A/reach|seed=0|trial=0", "B/reach|seed=0|trial=0"]
    assert items[0].pair_key == items[1].pair_key == "reach|seed=0|trial=0"
    assert {it.arm for it in items} == {"A", "B"}


def test_bad_trials_refused():
    with pytest.raises(seq.SeqInputError, match="trials"):
        plan(_spec(), trials=0)


def test_tasks_filter():
    items = plan(_spec(), tasks=["push"])
    assert [it.item_id for it in items] == ["push|seed=0", "push|seed=1"]


def test_unknown_task_suggests_close_name():
    with pytest.raises(seq.SeqInputError, match="Did you mean 'reach'"):
        plan(_spec(), tasks=["raech"])


def test_seeds_replace_benchmark_seeds():
    items = plan(_spec(), seeds=[7, 8, 9])
    assert [it.item_id for it in items] == [
        "reach|seed=7",
        "reach|seed=8",
        "reach|seed=9",
        "push|seed=7",
        "push|seed=8",
        "push|seed=9",
    ]


def test_empty_seeds_refused():
    with pytest.raises(seq.SeqInputError, match="seeds"):
        plan(_spec(), seeds=[])


def test_max_steps_overrides_every_condition():
    spec = _spec(conditions=seq.conditions(tasks=["reach"], max_steps=50))
    assert [it.condition.max_steps for it in plan(spec)] == [50]
    assert [it.condition.max_steps for it in plan(spec, max_steps=5)] == [5]
    with pytest.raises(seq.SeqInputError, match="max_steps"):
        plan(spec, max_steps=0)


def test_suites_selected_and_unknown_refused():
    spec = _spec(conditions={"easy": seq.conditions(tasks=["reach"]), "hard": seq.conditions(tasks=["push"])})
    assert [it.item_id for it in plan(spec)] == ["reach|seed=0"]
    assert [it.item_id for it in plan(spec, suites=["hard", "easy"])] == ["push|seed=0", "reach|seed=0"]
    with pytest.raises(seq.SeqInputError, match="Did you mean 'hard'"):
        plan(spec, suites=["hrad"])


def test_act_seed_deterministic_and_distinct():
    assert act_seed(3, 0, 5) == act_seed(3, 0, 5)
    seeds = {act_seed(3, trial, act) for trial in range(3) for act in range(50)}
    assert len(seeds) == 150
    assert act_seed(3, 0, 1) != act_seed(3, 1, 1)
    assert all(0 <= s < 2**63 for s in seeds)
