"""`act_seeds(episode_seed, trial)` is `act_seed(episode_seed, trial, ·)` with the episode's part
hashed once: the seeds a policy gets must not depend on which of the two computed them."""

from __future__ import annotations

import numpy as np
import pytest

from seq.authoring.seeding import act_seed, act_seeds


@pytest.mark.parametrize(
    "episode_seed, trial, act_index",
    [(0, 0, 0), (7, 1, 12), (-5, 2, -1), (2**40, 0, 10**12), (1, 0, True), (1, 0, 1.0),
     (1, 0, np.int64(3)), (1, 0, np.float64(2.5)), (3, 0, False)],
)
def test_act_seeds_equals_act_seed_for_every_input(episode_seed, trial, act_index):
    assert act_seeds(episode_seed, trial)(act_index) == act_seed(episode_seed, trial, act_index)
