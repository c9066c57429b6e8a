"""Behaviour cloning on MetaWorld expert demonstrations, evaluated with seq while it trains.

    python examples/train_bc.py [--task reach-v3] [--demos 50] [--epochs 5] [--eval-seeds 10]

A two-layer numpy MLP learns the scripted expert's actions from its own observations; after every
epoch `seq.evaluate` runs the model object itself (no registration, no server, no copy of the
weights) on held-out seeds and prints the success rate with its Wilson interval.
"""

from __future__ import annotations

import argparse

import numpy as np

import seq
from seq.shelf.metaworld import make_env


@seq.policy(name="bc-mlp")
class BehaviourCloning(seq.Policy):
    """obs → tanh(W2 · relu(W1 · (obs − μ)/σ)): trained here, evaluated as it is."""

    def __init__(self, inputs: int = 39, hidden: int = 128, outputs: int = 4, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.w1 = rng.normal(0, np.sqrt(2 / inputs), (inputs, hidden))
        self.w2 = rng.normal(0, np.sqrt(1 / hidden), (hidden, outputs))
        self.mean, self.scale = np.zeros(inputs), np.ones(inputs)

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hidden = np.maximum(0.0, ((obs - self.mean) / self.scale) @ self.w1)
        return hidden, np.tanh(hidden @ self.w2)

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        return self.forward(np.asarray(obs, dtype=np.float64))[1].astype(np.float32)

    def train_epoch(self, obs: np.ndarray, actions: np.ndarray, rate: float = 0.1, batch: int = 64) -> float:
        """One pass of minibatch gradient descent on the squared error; returns the mean loss."""
        order, losses = np.random.default_rng(len(obs)).permutation(len(obs)), []
        for start in range(0, len(obs), batch):
            x, y = obs[order[start : start + batch]], actions[order[start : start + batch]]
            normed = (x - self.mean) / self.scale
            hidden, out = self.forward(x)
            error = out - y
            losses.append(float((error**2).mean()))
            grad_out = error * (1 - out**2) / len(x)
            grad_hidden = (grad_out @ self.w2.T) * (hidden > 0)
            self.w2 -= rate * hidden.T @ grad_out
            self.w1 -= rate * normed.T @ grad_hidden
        return float(np.mean(losses))


def demonstrations(task: str, seeds: range) -> tuple[np.ndarray, np.ndarray]:
    """(observation, expert action) pairs from the scripted expert's episodes."""
    from metaworld.policies import ENV_POLICY_MAP

    expert, cache, obs_list, act_list = ENV_POLICY_MAP[task](), {}, [], []
    for seed in seeds:
        env = make_env(task, seed, cache)
        obs, _ = env.reset(seed=seed)
        for _ in range(200):
            action = np.clip(expert.get_action(obs), -1, 1)
            obs_list.append(obs)
            act_list.append(action)
            obs, _, _, _, info = env.step(action)
            if info["success"]:
                break
    return np.array(obs_list), np.array(act_list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="reach-v3")
    parser.add_argument("--demos", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--eval-seeds", type=int, default=10)
    args = parser.parse_args()
    obs, actions = demonstrations(args.task, range(100, 100 + args.demos))  # training seeds
    model = BehaviourCloning()
    model.mean, model.scale = obs.mean(0), obs.std(0) + 1e-6
    for epoch in range(1, args.epochs + 1):
        for _ in range(40):
            loss = model.train_epoch(obs, actions, rate=0.1)
        report = seq.evaluate(
            model, "metaworld", tasks=[args.task], seeds=range(args.eval_seeds), max_steps=200
        )
        success = report.metric("success")
        print(
            f"epoch {epoch}: loss {loss:.4f}, success {success.value:.2f} "
            f"[{success.low:.2f}, {success.high:.2f}] (Wilson, n={success.n}) eval {report.eval_id}"
        )


if __name__ == "__main__":
    main()
