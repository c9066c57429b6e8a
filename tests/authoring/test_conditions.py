"""seq.conditions and seq.Condition."""

from __future__ import annotations

import pytest

import seq


def test_product_of_tasks_variants_seeds_in_order():
    conds = seq.conditions(tasks=["reach", "push"], seeds=range(2), variants=["dim", "bright"])
    assert len(conds) == 8
    assert [(c.task, c.variation, c.seed) for c in conds[:4]] == [
        ("reach", "dim", 0),
        ("reach", "dim", 1),
        ("reach", "bright", 0),
        ("reach", "bright", 1),
    ]
    assert {c.task for c in conds[4:]} == {"push"}


def test_limits_passed_to_every_condition():
    conds = seq.conditions(tasks=["a", "b"], seeds=[5], max_steps=40, timeout_s=2.5)
    assert [(c.seed, c.max_steps, c.timeout_s) for c in conds] == [(5, 40, 2.5), (5, 40, 2.5)]


def test_suite_of_assigns_suites():
    conds = seq.conditions(tasks=["reach", "push"], suite_of={"reach": "easy"})
    assert {c.task: c.suite for c in conds} == {"reach": "easy", "push": None}


def test_suite_of_unknown_task_refused():
    with pytest.raises(seq.SeqInputError, match="pick"):
        seq.conditions(tasks=["reach"], suite_of={"pick": "hard"})


def test_empty_tasks_refused():
    with pytest.raises(seq.SeqInputError, match="tasks is empty"):
        seq.conditions(tasks=[])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": True}, "max_steps"),
        ({"timeout_s": -1.0}, "timeout_s"),
        ({"seed": 1.5}, "seed"),
        ({"seed": "3"}, "seed"),
    ],
)
def test_condition_refuses_bad_values(kwargs, match):
    with pytest.raises(seq.SeqInputError, match=match):
        seq.Condition(task="reach", **kwargs)


def test_condition_refuses_empty_task():
    with pytest.raises(seq.SeqInputError, match="task"):
        seq.Condition(task="")


def test_key_is_stable_and_readable():
    cond = seq.Condition(task="reach", seed=3, variation="dim", extra={"z": 1, "a": "x"}, max_steps=9)
    assert cond.key == "reach|variation=dim|a=x|z=1|seed=3"
    same = seq.Condition(task="reach", seed=3, variation="dim", extra={"a": "x", "z": 1})
    assert same.key == cond.key
    assert seq.Condition(task="reach").key == "reach|seed=0"
    assert seq.Condition(task="reach", seed=1).key != seq.Condition(task="reach", seed=2).key


def test_variant_dict_keys_readable_as_attributes():
    [cond] = seq.conditions(tasks=["reach"], variants=[{"name": "dim", "lighting": 0.2, "table": "oak"}])
    assert cond.variation == "dim"
    assert cond.lighting == 0.2
    assert cond.table == "oak"
    with pytest.raises(AttributeError):
        _ = cond.missing


def test_condition_dict_round_trip():
    cond = seq.Condition(task="reach", seed=2, variation="v", suite="easy", extra={"k": 1})
    assert seq.Condition.from_dict(cond.to_dict()) == cond
