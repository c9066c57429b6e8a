"""What a policy declares besides its hooks: where it runs (`gpu=`, `max_gpus=`), its weights
(`weights=`, a volume handed to `@seq.load` as `weights_dir`), the chat models it may call
(`models=`), and its planner (`@seq.plan(every_s=…)`).

They are validated here and stored with the policy's version as plain data (`PolicySpec.declared`);
the engine checks the card before an eval (`seq.engine.policy_requirements`), and the process that loads
the policy mounts the weights and builds the chat client (`seq.registry.instances`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from seq.authoring.declarations import Volume
from seq.authoring.hooks import PLAN_EVERY_ATTRIBUTE
from seq.authoring.resources import check_gpu
from seq.errors import SeqInputError

PLAN_KEYWORDS = ("instruction", "current")


def check_max_gpus(value: Any, gpu: str | None, where: str) -> int:
    """`max_gpus=`: the most cards the policy may use, a positive integer, with a card named."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SeqInputError(
            f"{where}: max_gpus= is the most cards the policy may use, a positive integer; got {value!r}."
        )
    if gpu is None or gpu.lower() == "cpu":
        raise SeqInputError(f"{where}: max_gpus={value} needs gpu= naming a card ('H100', 'any').")
    return value


def check_models(value: Any, where: str) -> list[str]:
    """`models=`: the names of the chat models the policy may call, each once."""
    names = [value] if isinstance(value, str) else value
    if (
        not isinstance(names, Sequence)
        or not names
        or not all(isinstance(name, str) and name.strip() for name in names)
    ):
        raise SeqInputError(
            f"{where}: models= must be a list of model names, e.g. ['planner']; got {value!r}."
        )
    if len(set(names)) != len(names):
        raise SeqInputError(f"{where}: models= names a model twice: {list(names)!r}.")
    return [name.strip() for name in names]


def policy_declared(where: str, gpu: Any, max_gpus: Any, weights: Any, models: Any) -> dict[str, Any]:
    """The declarations, checked, as plain data (only those given)."""
    declared: dict[str, Any] = {}
    if gpu is not None:
        declared["gpu"] = check_gpu(gpu, where)
    if max_gpus is not None:
        declared["max_gpus"] = check_max_gpus(max_gpus, declared.get("gpu"), where)
    if weights is not None:
        if not isinstance(weights, Volume):
            raise SeqInputError(f"{where}: weights= must be seq.Volume.from_name(NAME), got {weights!r}.")
        declared["weights"] = weights.to_dict()
    if models is not None:
        declared["models"] = check_models(models, where)
    return declared


def plan_keywords(method: Callable[..., Any], where: str) -> tuple[str, ...]:
    """What a `@seq.plan` method takes besides `obs`: some of `instruction` and `current`."""
    names = list(inspect.signature(method).parameters)
    if names[:2] != ["self", "obs"]:
        raise SeqInputError(
            f"{where}: @seq.plan must be `def {method.__name__}(self, obs, *, instruction=None)`."
        )
    taken = []
    for name, parameter in list(inspect.signature(method).parameters.items())[2:]:
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return PLAN_KEYWORDS
        if name not in PLAN_KEYWORDS:
            raise SeqInputError(
                f"{where}: @seq.plan takes the keywords {', '.join(PLAN_KEYWORDS)}; it declares {name!r}."
            )
        taken.append(name)
    return tuple(taken)


def plan_every_s(method: Callable[..., Any]) -> float:
    return float(getattr(method, PLAN_EVERY_ATTRIBUTE))
