"""A LeRobot `pretrained_model` folder, read without torch: what the built-in policy `lerobot`
loads, what observation it needs, and the hash the eval's manifest pins it by.

A folder as `lerobot-train` writes it (`…/checkpoints/last/pretrained_model/`), or as
`PreTrainedPolicy.save_pretrained` does: `config.json` naming the policy's `type` and its
`input_features`, the weights in `model.safetensors`, and LeRobot 0.4's processors
(`policy_preprocessor.json`, `policy_postprocessor.json` and their state files) when present.

The observation the policy takes is the one LeRobot's gym environments return, which LeRobot's
`preprocess_observation` turns into its features; nested keys may be joined with `/`:

| LeRobot feature                | observation key                                   |
|--------------------------------|---------------------------------------------------|
| `observation.image`            | `pixels` (H, W, 3) uint8                          |
| `observation.images.NAME`      | `pixels/NAME` (H, W, 3) uint8                     |
| `observation.environment_state`| `environment_state`                               |
| `observation.state`            | `agent_pos`                                       |
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from seq.errors import SeqInputError

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
PREPROCESSOR = "policy_preprocessor.json"
POSTPROCESSOR = "policy_postprocessor.json"
SEPARATOR = "/"


class FeatureType(StrEnum):
    """LeRobot's feature types, as `config.json` writes them."""

    VISUAL = "VISUAL"
    STATE = "STATE"
    ENV = "ENV"
    ACTION = "ACTION"
    LANGUAGE = "LANGUAGE"
    REWARD = "REWARD"


@dataclass(frozen=True)
class Checkpoint:
    """What a `pretrained_model` folder holds: its policy `type`, input features (name → (type,
    shape)), whether it carries LeRobot 0.4's processors, and the sha256 of its content."""

    path: Path
    policy_type: str
    input_features: dict[str, tuple[FeatureType, tuple[int, ...]]]
    has_processors: bool
    sha256: str

    def manifest(self, policy_class: str) -> dict[str, Any]:
        return {
            "class": policy_class,
            "type": self.policy_type,
            "path": str(self.path),
            "sha256": self.sha256,
        }


def content_sha256(folder: Path) -> str:
    """The sha256 of every file's relative path and bytes, in path order: the same files give the
    same hash wherever the folder lies."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = file.relative_to(folder).as_posix()
        digest.update(relative.encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def read_checkpoint(pretrained: str | Path) -> Checkpoint:
    """Read a `pretrained_model` folder, refusing one that is not a local folder holding its
    config and its weights (nothing is ever downloaded)."""
    where = f"--param pretrained={pretrained}"
    if not str(pretrained):
        raise SeqInputError(
            "policy lerobot needs --param pretrained=DIR, a folder written by lerobot-train or "
            "save_pretrained."
        )
    path = Path(pretrained).expanduser()
    if not path.is_dir():
        raise SeqInputError(
            f"{where}: no such local folder; the lerobot policy loads a pretrained_model folder from "
            "disk and downloads nothing (a hub id must be downloaded first)."
        )
    config_file = path / CONFIG
    try:
        config = json.loads(config_file.read_text())
    except FileNotFoundError:
        raise SeqInputError(
            f"{where}: the folder has no {CONFIG}, so it is not a LeRobot pretrained_model."
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SeqInputError(f"{config_file}: not valid JSON ({error}).") from None
    if not isinstance(config, dict) or not isinstance(config.get("type"), str):
        raise SeqInputError(
            f'{config_file}: names no policy \'type\' (such as "act" or "diffusion"), as '
            "lerobot-train writes it."
        )
    if not (path / WEIGHTS).is_file():
        hub = [
            f"{key}={config[key]!r}"
            for key in ("pretrained_path", "repo_id", "pretrained_backbone_weights", "vlm_model_name")
            if isinstance(config.get(key), str) and config[key] and not Path(config[key]).exists()
        ]
        names = f" (it names {', '.join(hub)} on the hub)" if hub else ""
        raise SeqInputError(
            f"{where}: the folder has no {WEIGHTS}{names}, and the lerobot policy downloads nothing: "
            "give a folder that holds its weights."
        )
    features = _input_features(config.get("input_features"), config_file)
    return Checkpoint(
        path=path.resolve(),
        policy_type=config["type"],
        input_features=features,
        has_processors=(path / PREPROCESSOR).is_file() and (path / POSTPROCESSOR).is_file(),
        sha256=content_sha256(path),
    )


def _input_features(raw: Any, config_file: Path) -> dict[str, tuple[FeatureType, tuple[int, ...]]]:
    if not isinstance(raw, dict) or not raw:
        raise SeqInputError(
            f"{config_file}: input_features must be a non-empty mapping of feature to type and shape."
        )
    features = {}
    for name, feature in raw.items():
        try:
            kind = FeatureType(feature["type"])
            shape = tuple(int(n) for n in feature["shape"])
        except (KeyError, TypeError, ValueError):
            raise SeqInputError(
                f"{config_file}: input_features[{name!r}] must have a type (VISUAL, STATE, ENV, ...) "
                "and a shape."
            ) from None
        features[name] = (kind, shape)
    return features


def observation_keys(checkpoint: Checkpoint) -> dict[str, tuple[str, ...]]:
    """For each input feature, the observation keys that fill it (see the module's table)."""
    keys: dict[str, tuple[str, ...]] = {}
    for name, (kind, _) in checkpoint.input_features.items():
        if name == "observation.image":
            keys[name] = ("pixels",)
        elif name.startswith("observation.images."):
            keys[name] = ("pixels" + SEPARATOR + name.removeprefix("observation.images."),)
        elif name == "observation.environment_state":
            keys[name] = ("environment_state",)
        elif name == "observation.state":
            keys[name] = ("agent_pos",)
        elif kind is FeatureType.LANGUAGE:
            keys[name] = ()  # the instruction, given as `task`
        else:
            keys[name] = (name,)
    return keys


def input_problems(checkpoint: Checkpoint, observation: Any) -> list[str]:
    """Each way `observation` cannot fill the policy's input features, naming the feature and the
    key it needs (empty when it fills them all)."""
    if not isinstance(observation, Mapping):
        wanted = ", ".join(checkpoint.input_features)
        return [f"the observation is not a dict of LeRobot's environment keys (for {wanted})"]
    observation = flatten(observation)
    problems = []
    keys = observation_keys(checkpoint)
    for name, (kind, shape) in checkpoint.input_features.items():
        for key in keys[name]:
            if key not in observation:
                problems.append(f"{name} needs {key!r}, which is missing")
                continue
            value = np.asarray(observation[key])
            if kind is FeatureType.VISUAL:
                channels, height, width = shape
                if value.dtype != np.uint8 or value.ndim != 3 or value.shape[-1] != channels:
                    problems.append(
                        f"{name} needs {key!r} as an (H, W, {channels}) uint8 image, and it is "
                        f"{value.dtype} {tuple(value.shape)}"
                    )
            elif value.shape != shape:
                problems.append(f"{name} needs {key!r} of shape {shape}, and it is {tuple(value.shape)}")
    return problems


def nest(observation: Mapping[str, Any]) -> dict[str, Any]:
    """`{"pixels/top": a}` → `{"pixels": {"top": a}}`: the nesting LeRobot's environments return."""
    nested: dict[str, Any] = {}
    for key, value in observation.items():
        *parents, last = key.split(SEPARATOR)
        level = nested
        for parent in parents:
            level = level.setdefault(parent, {})
        level[last] = value
    return nested


def flatten(observation: Mapping[str, Any]) -> dict[str, Any]:
    """`{"pixels": {"top": a}}` → `{"pixels/top": a}`: a nested observation (gym-aloha's) keyed as
    the policy's inputs are."""
    flat: dict[str, Any] = {}
    for key, value in observation.items():
        if isinstance(value, Mapping):
            flat.update({f"{key}{SEPARATOR}{inner}": item for inner, item in flatten(value).items()})
        else:
            flat[key] = value
    return flat
