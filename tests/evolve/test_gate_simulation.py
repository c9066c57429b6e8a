"""The difficulty gate, proved by simulation (`seq.evolve.simulation`, seeded, a few seconds): a
candidate with no true drop is promoted at most α of the time, the drop the report shows for the
promoted is their true drop, and a seed's rate is measured on trials that did not choose it. The
same simulation shows what the evidence was before (the trials that chose the seed, Agresti–Min
above 0): false promotions above α and inflated drops."""

from __future__ import annotations

import math

import pytest

from seq.evolve import Thresholds
from seq.evolve.evidence import TrialBlocks, difficulty, estimate, reference_evidence, thin_margin
from seq.evolve.gates import PROMOTE, REJECT, REVIEW, decide
from seq.evolve.simulation import ALL_PASS, HORIZON, SHIFT, simulate

ALPHA = Thresholds().alpha
# Seeds chosen from 100 conditions whose rates lie close together: the top of those that failed
# once is far above its true rate, the case in which evidence from the choosing trials misleads.
SELECTIVE = {"conditions": 100, "rates": (0.5, 0.7), "cycles": 400}


@pytest.mark.parametrize("coupling", [0.0, 0.5])
def test_a_candidate_with_no_true_drop_is_promoted_at_most_alpha_of_the_time(coupling):
    found = simulate(0.0, SHIFT, coupling=coupling, seed=1, **SELECTIVE)
    assert found.candidates == 800
    assert found.rate <= ALPHA, found
    if coupling == 0.0:  # before: the seed's lucky trials were the baseline
        assert found.old_rate > 2 * ALPHA, found
    # the test alone (any drop passes the threshold) still holds its level
    alone = simulate(0.0, SHIFT, coupling=coupling, seed=2, thresholds=Thresholds(drop=0.0), **SELECTIVE)
    assert alone.rate <= ALPHA, alone


@pytest.mark.parametrize(("kind", "drop"), [(SHIFT, 0.2), (SHIFT, 0.4), (HORIZON, 0.0)])
def test_the_drop_reported_for_the_promoted_is_their_true_drop(kind, drop):
    found = simulate(drop, kind, coupling=0.5, seed=3, cycles=600)  # horizon: at the median
    assert found.promoted >= 50, found
    assert abs(found.bias) <= 3 * found.bias_se + 0.01, found  # unbiased, within noise
    if kind == SHIFT:
        assert found.true_drop == pytest.approx(drop)
        assert found.old_reported_drop - drop > 0.1, found  # before: inflated among the promoted


def test_a_seeds_rate_is_measured_on_trials_that_did_not_choose_it():
    found = simulate(0.4, SHIFT, coupling=0.5, seed=4, **SELECTIVE)
    assert found.promoted >= 30, found
    assert found.seed_selection - found.seed_true > 0.15, found  # the top of those that failed once
    assert abs(found.seed_fresh - found.seed_true) < 0.05, found


def _runs(outcomes: list[int], first: int = 0) -> dict[int, float | None]:
    return {first + i: float(x) for i, x in enumerate(outcomes)}


def test_a_four_to_nothing_table_is_not_enough_and_five_is():
    blocks = TrialBlocks(10)
    seed = _runs([1] * 10, 10)
    four = difficulty(seed, _runs([0] * 4 + [1] * 6, 10), blocks.gate, ALPHA)
    assert (four["seed_only"], four["candidate_only"], four["p_value"]) == (4, 0, 0.0625)
    decision, reasons = decide(four, ALL_PASS, math.inf, Thresholds())
    assert decision == REJECT and "p = 0.0625" in reasons[0] and "p ≤ 0.05" in reasons[0]
    five = difficulty(seed, _runs([0] * 5 + [1] * 5, 10), blocks.gate, ALPHA)
    assert five["p_value"] == 1 / 32 and decide(five, ALL_PASS, math.inf, Thresholds())[0] == PROMOTE
    # the gate reads only its block: the selection trials (0–9) do not count, whatever they say
    assert difficulty({**seed, **_runs([1] * 10)}, _runs([0] * 10), blocks.gate, ALPHA)["pairs"] == 0


def test_errored_episodes_are_left_out_of_the_pairs():
    seed = {10: 1.0, 11: 1.0, 12: None, 13: 1.0}
    found = estimate(seed, {10: 0.0, 11: None, 12: 0.0}, range(10, 14))
    assert found["pairs"] == 1 and found["left_out"] == 3 and found["drop"] == 1.0
    assert found["method"] == "tango" and found["low"] < 0 < found["high"]  # one pair: no evidence


class _Episode:
    def __init__(self, steps: int, success: float = 1.0, duration: float = 0.0) -> None:
        self.status, self.ended_by, self.steps = "ok", "check", steps
        self.metrics = {"success": success, "steps": steps, "duration_s": duration}


def test_a_deterministic_reference_is_one_outcome_and_a_thin_margin_waits_for_review():
    twice = [(1.0, _Episode(60, duration=0.1)), (1.0, _Episode(60, duration=0.3))]  # timing aside
    same = reference_evidence(twice, limit=64)
    assert same["distinct"] == 1 and same["episodes"] == 2 and same["spare"] == 4
    assert thin_margin(same, 0.10) and not thin_margin(same, 0.05)
    varied = reference_evidence([(1.0, _Episode(60)), (1.0, _Episode(52))], limit=64)
    assert varied["distinct"] == 2 and not thin_margin(varied, 0.10)
    five = difficulty(_runs([1] * 10, 10), _runs([0] * 10, 10), TrialBlocks(10).gate, ALPHA)
    thin = {**ALL_PASS, "solvability": {**ALL_PASS["solvability"], **same, "thin": True}}
    decision, reasons = decide(five, thin, math.inf, Thresholds())
    assert decision == REVIEW
    assert reasons == ["solvability: the reference's one outcome (2 identical episodes) finished 4 steps "
                       "inside the limit of 64"]  # fmt: skip


def test_alpha_is_a_level():
    with pytest.raises(Exception, match="Thresholds.alpha"):
        Thresholds(alpha=0.0)
