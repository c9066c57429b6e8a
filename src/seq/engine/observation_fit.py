"""Before any episode: does what the benchmark observes fit what the policy takes?

A policy declares its inputs as a class attribute `inputs` (or `@seq.policy(inputs=...)` where
supported), in the form of `seq.tf.spec`: `{"image": (224, 224, 3), "state": (8,)}`, a dtype with
`((224, 224, 3), "uint8")`, None for any size or value; or a single shape for an array observation.
A gym-style `observation_space` class attribute (a `Dict` of `Box`es, or a `Box`) works too. A
policy whose inputs depend on its parameters (the checkpoint a parameter names) defines instead a
classmethod `input_problems(parameters, observation)` returning each way the observation does not
fit, as a phrase naming the key.

The benchmark's observation is read in the runner's process: `@seq.setup` with the arm's
parameters, then the benchmark's own `sample_observations()` if it defines one, else `@seq.reset`
of the eval's first condition and `env.reset(seed=...)`. That is only done when there is something
to check (the policy declares inputs, or an adapter is named). With an adapter, its lossless
labels are checked again on that observation, and the observation it gives the policy is what is
compared with the inputs. A mismatch is refused with every mismatched key named.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq.authoring.adapter import Adapter
from seq.authoring.benchmark import spec_of
from seq.authoring.conditions import Condition
from seq.authoring.env_contract import close_env, reset_env
from seq.authoring.policy import policy_spec_of
from seq.errors import SeqInputError
from seq.registry.adapter_checks import check_instance, describe_transforms
from seq.tf.spec import Spec, describe_value, parse_spec

TRIES = 3  # conditions tried, in order, to read one observation


@dataclass
class Compatibility:
    """What the check saw: the benchmark's observation, what the policy is given, the adapter's labels."""

    observation: Any = None
    policy_input: Any = None
    adapter: dict[str, Any] = field(default_factory=dict)

    def to_manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "observation": describe_value(self.observation),
            "policy_input": describe_value(self.policy_input),
        }
        if self.adapter:
            out["adapter"] = self.adapter
        return out


def _from_space(space: Any) -> Any:
    spaces = getattr(space, "spaces", None)
    if isinstance(spaces, Mapping):
        return {str(k): _from_space(v) for k, v in spaces.items()}
    shape = getattr(space, "shape", None)
    if shape is None:
        return None
    dtype = getattr(space, "dtype", None)
    return (tuple(shape), str(dtype)) if dtype is not None else tuple(shape)


def policy_inputs(policy_cls: type | None) -> Spec | None:
    """What a policy declares it takes (see the module), or None when it declares nothing (or it
    runs behind a server, `policy_cls` None)."""
    if policy_cls is None:
        return None
    spec = policy_spec_of(policy_cls)
    declared = getattr(spec, "inputs", None)
    if declared is None:
        declared = getattr(policy_cls, "inputs", None)
    space = getattr(policy_cls, "observation_space", None)
    if declared is None and space is not None:
        declared = _from_space(space)
    if declared is None:
        return None
    return parse_spec(declared, f"policy {spec.name!r}: inputs", wildcards=True)


def sample_observations(
    benchmark_cls: type, setup_parameters: Mapping[str, Any], conditions: Sequence[Condition], label: str
) -> list[Any]:
    """The benchmark's observations to check against: its `sample_observations()` if it defines one,
    else the first observation of the first of `conditions` that resets (its env is closed after)."""
    spec = spec_of(benchmark_cls)
    try:
        benchmark = benchmark_cls()
        if "setup" in spec.hooks:
            getattr(benchmark, spec.hooks["setup"])(**setup_parameters)
        own = getattr(benchmark, "sample_observations", None)
        if callable(own):
            samples = list(own())
            if samples:
                return samples
    except Exception as error:
        raise SeqInputError(
            f"benchmark {label}: its setup raised {type(error).__name__}: {error}, so its observation "
            "cannot be checked against the policy's inputs."
        ) from None
    errors: list[str] = []
    for condition in list(conditions)[:TRIES]:
        kept: list[Any] = []  # the env once built, closed even if its reset fails
        try:
            return [reset_env(benchmark, spec, condition, kept.append).observation]
        except SeqInputError as error:  # the benchmark said what is wrong: its sentence is enough
            if not errors:
                said = str(error)
                named = said.startswith(label.split("@")[0])
                raise SeqInputError(said if named else f"benchmark {label}: {said}") from None
            errors.append(f"{condition.task} seed {condition.seed}: {error}")
        except Exception:
            errors.append(f"{condition.task} seed {condition.seed}: {traceback.format_exc(limit=1).strip()}")
        finally:
            for env in kept:
                close_env(env)
    raise SeqInputError(
        f"benchmark {label}: no reset of its first conditions gave an observation to check the policy's "
        f"inputs against ({'; '.join(errors) or 'no conditions'})."
    )


def mismatches(inputs: Spec, observation: Any) -> list[str]:
    """Each way `observation` does not fit `inputs`, naming the key (empty when it fits)."""
    if isinstance(inputs, dict):
        if not isinstance(observation, Mapping):
            return [
                f"the observation is a {describe_value(observation)} array, not a dict with keys "
                f"{', '.join(map(repr, inputs))}"
            ]
        found = []
        for key, array in inputs.items():
            if key not in observation:
                found.append(f"{key!r} is missing")
            else:
                problem = array.mismatch(observation[key])
                if problem:
                    found.append(f"{key!r} {problem}")
        return found
    problem = inputs.mismatch(observation)
    return [f"the observation {problem}"] if problem else []


def _has(observation: Any) -> str:
    described = describe_value(observation)
    if isinstance(described, dict):
        return ", ".join(f"{k!r} {v}" for k, v in described.items()) or "no keys"
    return f"one {described} array"


def check_compatibility(
    benchmark_cls: type,
    benchmark_label: str,
    setup_parameters: Mapping[str, Any],
    conditions: Sequence[Condition],
    policy_cls: type | None,
    policy_label: str,
    adapter: Adapter | None = None,
    adapter_label: str | None = None,
    sampler: Callable[[], list[Any]] | None = None,
    policy_parameters: Mapping[str, Any] | None = None,
) -> Compatibility | None:
    """Refuse an eval whose policy cannot take the benchmark's observation (through the adapter,
    when one is named), before any episode, naming every mismatched key. Returns what it saw, or
    None when there was nothing to check (no declared inputs and no adapter). `sampler` gives the
    observations instead of a reset in this process (a benchmark isolated in an image);
    `policy_parameters` the values the policy's `input_problems` is given."""
    inputs = policy_inputs(policy_cls)
    own_check = getattr(policy_cls, "input_problems", None)
    if own_check is not None:
        parameters = dict(policy_parameters or {})
        inputs = None

        def problems(observation: Any) -> list[str]:
            return list(own_check(parameters, observation))
    elif inputs is not None:
        declared = inputs

        def problems(observation: Any) -> list[str]:
            return mismatches(declared, observation)

    if inputs is None and own_check is None and adapter is None:
        return None
    if sampler is not None:
        observations = sampler()
    else:
        observations = sample_observations(benchmark_cls, setup_parameters, conditions, benchmark_label)
    seen = observations
    result = Compatibility(observation=observations[0])
    if adapter is not None:
        where = f"adapter {adapter_label or type(adapter).__name__}"
        seen = check_instance(
            adapter, where, observations, on=f" on benchmark {benchmark_label}'s observation"
        )
        result.adapter = describe_transforms(adapter)
    result.policy_input = seen[0]
    if inputs is None and own_check is None:
        return result
    for observation in seen:
        found = problems(observation)
        if found:
            if adapter is None:
                raise SeqInputError(
                    f"policy {policy_label} does not take benchmark {benchmark_label}'s observation: "
                    f"{'; '.join(found)} (the observation has {_has(observation)}); "
                    "name an adapter with --adapter NAME."
                )
            raise SeqInputError(
                f"policy {policy_label} does not take benchmark {benchmark_label}'s observation through "
                f"adapter {adapter_label}: {'; '.join(found)} (the adapter gives {_has(observation)})."
            )
    return result
