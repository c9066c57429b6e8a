"""`lerobot`: a policy trained with LeRobot, evaluated unchanged from its `pretrained_model` folder.

    seq eval run lerobot --benchmark pusht --param pretrained=checkpoints/last/pretrained_model

It loads the policy class its `config.json` names (`act`, `diffusion`, `vqbet`, `pi0`, `smolvla`,
...) with its weights, strictly, and LeRobot 0.4's processors saved beside them, then runs each
act as `lerobot-eval` does: LeRobot's `preprocess_observation` on the environment's observation,
the task's instruction as `task`, the policy's preprocessor, `select_action` (LeRobot's action
queue and `n_action_steps`), the postprocessor. `reset()` is
called as each episode starts, and torch is seeded with the episode's seed before its first act
(so a diffusion policy draws the same noise each time an episode runs). Nothing is downloaded:
the Hugging Face libraries run offline, and a folder without its weights is refused
(`seq.shelf.lerobot_checkpoint`).

It needs LeRobot and PyTorch in the Python that runs it (`tools/lerobot_venv.sh` builds one), and
takes LeRobot's environment observation (`seq.shelf.lerobot_checkpoint` gives the keys): Push-T's
and ALOHA's as the `pusht` and `aloha` benchmarks give them with `obs_type=pixels_agent_pos`
(asked for here: the same gym environments LeRobot evaluates on), LIBERO's through the adapter
`libero-to-lerobot`, MetaWorld's through `metaworld-to-lerobot` (the `metaworld` benchmark's
camera, `obs_mode=pixels`, is asked for here too). Served (`seq policy serve lerobot`), each
replica holds one action queue, so give it one replica per environment.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import numpy as np

import seq
from seq.errors import SeqInputError
from seq.shelf.lerobot_checkpoint import Checkpoint, flatten, input_problems, nest, read_checkpoint


class LeRobotModel:
    """A loaded checkpoint: the policy and its processors."""

    def __init__(self, checkpoint: Checkpoint, device: str) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"  # before LeRobot imports the hub client: download nothing
        os.environ["HF_DATASETS_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            from lerobot.configs.policies import PreTrainedConfig
            from lerobot.policies.factory import get_policy_class, make_pre_post_processors
        except ImportError as error:
            raise ImportError(
                f"the lerobot policy needs LeRobot and torch where it runs, and this Python lacks "
                f"{error.name}: for a benchmark in an image of its own (libero), add --serve to serve "
                "the policy from the Python that runs the eval."
            ) from None

        path = str(checkpoint.path)
        config = PreTrainedConfig.from_pretrained(path)
        config.device = device
        policy_class = get_policy_class(config.type)
        try:
            self.policy = policy_class.from_pretrained(path, config=config, strict=True)
        except RuntimeError as error:
            raise ValueError(
                f"lerobot: {path}/model.safetensors does not fit {policy_class.__name__} strictly "
                f"({str(error).splitlines()[0]}); a checkpoint from before LeRobot 0.4 keeps its "
                "normalization in the weights: convert it with LeRobot's migrate_policy_normalization."
            ) from None
        self.policy.eval()
        self.use_amp = bool(getattr(config, "use_amp", False))  # lerobot-eval autocasts then
        if checkpoint.has_processors:
            self.preprocessor, self.postprocessor = make_pre_post_processors(
                config,
                pretrained_path=path,
                preprocessor_overrides={"device_processor": {"device": device}},
                postprocessor_overrides={"device_processor": {"device": "cpu"}},
            )
        else:  # no saved statistics: the processors a fresh policy has (no normalization)
            self.preprocessor, self.postprocessor = make_pre_post_processors(config, dataset_stats=None)

    def reset(self) -> None:
        self.policy.reset()

    def act(self, observation: dict[str, Any], instruction: str | None) -> np.ndarray:
        """One action for one environment, as `lerobot-eval`'s rollout computes it."""
        import torch
        from lerobot.envs.utils import preprocess_observation

        raw = nest({key: np.asarray(value) for key, value in flatten(observation).items()})
        frame = preprocess_observation(_batched(raw))
        frame["task"] = [instruction or ""]
        frame = self.preprocessor(frame)
        device = torch.device(self.policy.config.device)
        autocast = torch.autocast(device_type=device.type) if self.use_amp else contextlib.nullcontext()
        with torch.no_grad(), autocast, torch.inference_mode():
            action = self.policy.select_action(frame)
        return self.postprocessor(action).to("cpu").numpy()[0]


def _batched(raw: dict[str, Any]) -> dict[str, Any]:
    """A batch of one, as a vector of one environment gives it to `preprocess_observation`."""
    return {key: _batched(value) if isinstance(value, dict) else value[None] for key, value in raw.items()}


@seq.policy(name="lerobot")
class LeRobotPolicy(seq.Policy):
    """A LeRobot `pretrained_model` folder (`pretrained`), run on `device` (cpu, cuda, mps)."""

    # Push-T's and ALOHA's observations as LeRobot's environments give them (images and state),
    # drawn as they draw them, and MetaWorld's camera (ignored by benchmarks that declare no such
    # parameter)
    benchmark_parameters = {"obs_type": "pixels_agent_pos", "fast_render": False, "obs_mode": "pixels"}

    def __init__(self) -> None:
        self.models: dict[tuple[str, str], LeRobotModel] = {}
        self.episode_seed: int | None = None  # torch is seeded with it before the episode's first act

    @classmethod
    def checkpoint_for(cls, parameters: dict[str, Any]) -> Checkpoint:
        """The checkpoint an eval's policy parameters name (read without torch)."""
        return read_checkpoint(parameters.get("pretrained", ""))

    @classmethod
    def input_problems(cls, parameters: dict[str, Any], observation: Any) -> list[str]:
        """How `observation` cannot fill the named checkpoint's input features (empty: it can)."""
        return input_problems(cls.checkpoint_for(parameters), observation)

    @classmethod
    def weights_for(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        """What the eval's manifest records: the policy class `config.json` names, the folder and
        the sha256 of its content."""
        checkpoint = cls.checkpoint_for(parameters)
        try:
            from lerobot.policies.factory import get_policy_class
        except ImportError as error:
            raise SeqInputError(
                f"the lerobot policy needs LeRobot and torch in the Python that runs the eval (it lacks "
                f"{error.name}): install seq's lerobot extra, or use tools/lerobot_venv.sh's Python."
            ) from None
        try:
            policy_class = get_policy_class(checkpoint.policy_type)
        except (ValueError, NotImplementedError, ImportError) as error:
            raise SeqInputError(
                f"{checkpoint.path}/config.json: LeRobot has no policy of type {checkpoint.policy_type!r} "
                f"({error})."
            ) from None
        return checkpoint.manifest(f"{policy_class.__module__}.{policy_class.__qualname__}")

    def model(self, pretrained: str, device: str) -> LeRobotModel:
        key = (pretrained, device)
        if key not in self.models:
            self.models[key] = LeRobotModel(read_checkpoint(pretrained), device)
        return self.models[key]

    @seq.begin
    def begin(self, seed: int | None = None) -> None:
        self.episode_seed = 0 if seed is None else seed
        for model in self.models.values():
            model.reset()

    @seq.infer
    def infer(
        self,
        obs: Any,
        *,
        seed: int | None = None,
        instruction: str | None = None,
        pretrained: str = "",
        device: str = "cpu",
    ) -> np.ndarray:
        model = self.model(pretrained, device)  # loaded first: loading draws from torch's generator
        if self.episode_seed is not None:
            import torch

            torch.manual_seed(self.episode_seed)
            self.episode_seed = None
        return model.act(obs, instruction)
