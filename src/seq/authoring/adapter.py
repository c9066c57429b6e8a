"""`@seq.adapter`: the bridge between a benchmark's observation and action and a policy's own.

An adapter is a `seq.Adapter` subclass with `obs_transforms` (applied in order to each observation
before the policy sees it) and `action_transforms` (applied in order to each action of the chunk
the policy returns), lists of `seq.tf` transforms; `episode_transforms` (applied in order to the
episode's start, a dict of `seq.EpisodeStart`'s fields, before the policy is told of it) give a
policy the episode fields its own harness sends (a vla-eval task's `name` is its instruction).
Its `__init__` may declare typed keyword parameters with defaults, set per eval with `--param
adapter.NAME=VALUE`; it may build its lists from them. `observation_spec` / `action_spec` declare
what it expects to be given (a shape, a (shape, dtype) pair, or a dict of them per key), so its
lossless labels can be checked when it is registered, before any benchmark is at hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from seq.authoring.begin import FIELDS, EpisodeStart
from seq.authoring.params import Parameter, declared_parameters, resolve_parameters
from seq.errors import SeqInputError
from seq.tf.base import Transform

SPEC_ATTRIBUTE = "__seq_spec__"


class Adapter:
    """Base class of adapters. Set `obs_transforms` and `action_transforms` (class attributes, or
    attributes set in `__init__` from its parameters)."""

    obs_transforms: Sequence[Transform] = ()
    action_transforms: Sequence[Transform] = ()
    episode_transforms: Sequence[Transform] = ()
    observation_spec: Any = None
    action_spec: Any = None

    def transform_obs(self, obs: Any) -> Any:
        """The observation the policy sees: every obs transform, in order."""
        return _run(self.obs_transforms, "obs_transforms", obs)

    def transform_action(self, action: Any) -> Any:
        """The action the env gets from one action of the policy's chunk: every action transform, in order."""
        return _run(self.action_transforms, "action_transforms", action)

    def transform_chunk(self, chunk: np.ndarray) -> np.ndarray:
        """Each action of a chunk `[H, ...]` through `transform_action`, stacked back to `[H, ...]`."""
        if not self.action_transforms:
            return chunk
        return np.stack([np.asarray(self.transform_action(action)) for action in chunk])

    def transform_episode(self, episode: EpisodeStart) -> EpisodeStart:
        """The episode's start as the policy is told of it: every episode transform, in order, on
        a dict of its fields."""
        if not self.episode_transforms:
            return episode
        fields = _run(self.episode_transforms, "episode_transforms", episode.to_dict())
        unknown = sorted(set(fields) - set(FIELDS)) if isinstance(fields, Mapping) else None
        if unknown is None or unknown:
            raise TransformError(
                f"episode_transforms gave {unknown or type(fields).__name__}; an episode's start "
                f"is a dict of {', '.join(FIELDS)}."
            )
        return EpisodeStart(**fields)


class TransformError(RuntimeError):
    """A transform of an adapter raised while an episode ran; the message names it."""


def _run(transforms: Sequence[Transform], where: str, value: Any) -> Any:
    for index, transform in enumerate(transforms):
        try:
            value = transform.apply(value)
        except Exception as error:
            raise TransformError(
                f"{where}[{index}] {transform.name}: {type(error).__name__}: {error}"
            ) from error
    return value


_SEALED = ("transform_obs", "transform_action", "transform_chunk", "transform_episode")


@dataclass(frozen=True)
class AdapterSpec:
    """Everything `@seq.adapter` declared: its name and the parameters of its `__init__`."""

    name: str
    parameters: dict[str, Parameter]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parameters": {p.name: p.describe() for p in self.parameters.values()},
        }


def adapter(name: str | None = None, **unknown: Any) -> Callable[[type], type]:
    """Declare an adapter class: `@seq.adapter(name="libero-to-pi05")` (default: the class name in
    lower case with hyphens). Its lists and labels are checked when `seq deploy` registers it."""
    if isinstance(name, type):  # used bare, as @seq.adapter
        return adapter()(name)
    if unknown:
        raise SeqInputError(
            f"@seq.adapter: unknown argument(s) {', '.join(sorted(unknown))}; it takes name=."
        )
    if name is not None and (not isinstance(name, str) or not name.strip() or "@" in name):
        raise SeqInputError(f"@seq.adapter: name= must be a non-empty name without '@', got {name!r}.")

    def decorate(cls: type) -> type:
        from seq.authoring.benchmark import _kebab

        where = f"@seq.adapter on {cls.__name__}"
        if not (isinstance(cls, type) and issubclass(cls, Adapter)):
            raise SeqInputError(f"{where}: the class must subclass seq.Adapter.")
        for method in _SEALED:
            if getattr(cls, method) is not getattr(Adapter, method):
                raise SeqInputError(
                    f"{where}: {method} cannot be overridden; put the logic in a labelled seq.tf transform "
                    "(a seq.tf.Transform subclass or seq.tf.custom)."
                )
        init = cls.__init__ if cls.__init__ is not object.__init__ else None
        spec = AdapterSpec(
            name=name or _kebab(cls.__name__),
            parameters=declared_parameters(init, f"{where}, __init__"),
        )
        setattr(cls, SPEC_ATTRIBUTE, spec)
        return cls

    return decorate


def adapter_spec_of(cls: type) -> AdapterSpec:
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    if not isinstance(spec, AdapterSpec):
        raise SeqInputError(f"{getattr(cls, '__name__', cls)!r} is not decorated with @seq.adapter.")
    return spec


def resolve_with_adapter(
    given: Mapping[str, Any], sides: Mapping[str, Mapping[str, Parameter]], spec: AdapterSpec | None
) -> dict[str, dict[str, Any]]:
    """`resolve_parameters` with the adapter as a side (`adapter.NAME`). An adapter that declares an
    int `steps_per_query` shares the eval's setting: `eval.steps_per_query`, `adapter.steps_per_query`
    and a bare `steps_per_query` all set it; the eval's value, else the adapter's default, is used
    by the loop and handed to the adapter."""
    given, sides = dict(given), dict(sides)
    shared = spec is not None and getattr(spec.parameters.get("steps_per_query"), "type", None) == "int"
    if spec is not None:
        sides["adapter"] = {
            k: p for k, p in spec.parameters.items() if not (shared and k == "steps_per_query")
        }
    if shared and "adapter.steps_per_query" in given:
        if "eval.steps_per_query" in given or "steps_per_query" in given:
            raise SeqInputError("--param adapter.steps_per_query: steps_per_query is also set; set it once.")
        given["eval.steps_per_query"] = given.pop("adapter.steps_per_query")
    values = resolve_parameters(given, sides)
    if shared:
        assert spec is not None
        if values["eval"].get("steps_per_query") is None:
            values["eval"]["steps_per_query"] = spec.parameters["steps_per_query"].default
        values["adapter"]["steps_per_query"] = values["eval"]["steps_per_query"]
    return values
