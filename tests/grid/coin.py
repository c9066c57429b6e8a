"""A tiny benchmark for grid tests: a coin the policy calls; `boom` cannot be reset, `sleepy`
steps slowly (for the watchdog). Deployed by the tests with `seq deploy`."""

import os
import time

import numpy as np

import seq


class CoinEnv:
    def __init__(self, delay: float) -> None:
        self.delay, self.won, self.done = delay, False, False

    def reset(self, seed=None):
        return np.array([0.0]), {}

    def step(self, action):
        time.sleep(self.delay)
        self.won = float(np.asarray(action).reshape(-1)[0]) > 0.5
        self.done = True
        return np.array([1.0]), float(self.won), True, False, {}


@seq.benchmark(
    name="coin",
    conditions=seq.conditions(tasks=["heads", "tails", "boom", "sleepy"], seeds=range(4)),
    max_steps=3,
)
class Coin(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        if variant.task == "boom":
            raise RuntimeError("this table has no coin")
        return CoinEnv(2.0 if variant.task == "sleepy" else 0.0)

    @seq.check
    def check(self, env):
        device = float(os.environ.get("CUDA_VISIBLE_DEVICES") or -1)  # where SEQ_DEVICES put it
        return seq.Step(done=env.done, metrics={"success": float(env.won), "device": device})


@seq.policy(name="coin-player")
class CoinPlayer(seq.Policy):
    """Wins with probability `skill`, drawn from the act's seed."""

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None, skill: float = 1.0):
        return np.array([1.0 if np.random.default_rng(seed).random() < skill else 0.0])


@seq.policy(name="coin-lucky")
class CoinLucky(seq.Policy):
    """Always wins; it declares no parameter, so a grid's modes all run it as one arm."""

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        return np.array([1.0])
