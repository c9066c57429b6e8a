"""The seed each act of a policy receives: hashed from the episode's seed, so a rerun replays exactly."""

from __future__ import annotations

import hashlib
from collections.abc import Callable


def act_seed(episode_seed: int, trial: int, act_index: int) -> int:
    """A 63-bit seed for the `act_index`-th policy query of an episode.

    Hashed (BLAKE2b) from the episode's seed, its trial number and the act's index: the same
    episode always carries the same seeds, and no two acts share a stream, so a policy that draws
    its noise from `seed` starts each replan from fresh noise.
    """
    digest = hashlib.blake2b(f"{episode_seed}:{trial}:{act_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def act_seeds(episode_seed: int, trial: int) -> Callable[[int], int]:
    """`act_seed(episode_seed, trial, ·)` with the episode's part hashed once: the episode loop
    asks for one seed every query."""
    prefix = hashlib.blake2b(f"{episode_seed}:{trial}:".encode(), digest_size=8)

    def seed(act_index: int) -> int:
        digest = prefix.copy()
        # as act_seed writes it: b"%d" would write a bool as 1 and a float without its fraction
        digest.update(b"%d" % act_index if type(act_index) is int else f"{act_index}".encode())
        return int.from_bytes(digest.digest(), "big") >> 1

    return seed
