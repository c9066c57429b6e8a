"""The seed each act of a policy receives: hashed from the episode's seed, so a rerun replays exactly."""

from __future__ import annotations

import hashlib


def act_seed(episode_seed: int, trial: int, act_index: int) -> int:
    """A 63-bit seed for the `act_index`-th policy query of an episode.

    Hashed (BLAKE2b) from the episode's seed, its trial number and the act's index: the same
    episode always carries the same seeds, and no two acts share a stream, so a policy that draws
    its noise from `seed` starts each replan from fresh noise.
    """
    digest = hashlib.blake2b(f"{episode_seed}:{trial}:{act_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
