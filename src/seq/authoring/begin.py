"""`@seq.begin`: what a policy is told as an episode starts, and how its hook is called.

The episode loop hands every policy handle an `EpisodeStart` (inline, or served over the `seq` or
vla-eval protocol, where it travels in the `episode_start` message); the handle calls the policy's
`@seq.begin` method, if it has one, with the keywords that method declares.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from seq.errors import SeqInputError

FIELDS = ("task", "suite", "instruction", "seed", "task_index")


@dataclass(frozen=True)
class EpisodeStart:
    """An episode that is starting: its task, suite, the instruction the policy will be given
    (None where the benchmark gives none), the seed of its condition and the task's position among
    its suite's tasks, in the order the benchmark declares them (vla-eval's `task_id`)."""

    task: str | None = None
    suite: str | None = None
    instruction: str | None = None
    seed: int | None = None
    task_index: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_message(cls, message: dict[str, Any], where: str) -> EpisodeStart:
        """The fields of a message (unknown keys ignored), each checked for its type."""
        values: dict[str, Any] = {}
        for name in FIELDS:
            value = message.get(name)
            if value is None:
                continue
            if name in ("seed", "task_index"):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ValueError(f"{where}: {name} must be an integer, got {value!r}.")
            elif not isinstance(value, str):
                raise ValueError(f"{where}: {name} must be a string, got {value!r}.")
            values[name] = value
        return cls(**values)


def begin_keywords(method: Callable[..., Any], where: str) -> tuple[str, ...] | None:
    """The fields a `@seq.begin` method takes (None: all, through `**kwargs`); refuses others."""
    taken: list[str] = []
    for name, parameter in list(inspect.signature(method).parameters.items())[1:]:
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if name not in FIELDS:
            raise SeqInputError(
                f"{where}: @seq.begin takes the keywords {', '.join(FIELDS)}; it declares {name!r}."
            )
        taken.append(name)
    return tuple(taken)


def call_begin(
    instance: Any, method_name: str, wanted: tuple[str, ...] | None, episode: EpisodeStart | None
) -> None:
    """Call `instance`'s `@seq.begin` method with the fields it declares (`wanted`; None: all)."""
    fields = (episode or EpisodeStart()).to_dict()
    getattr(instance, method_name)(**(fields if wanted is None else {name: fields[name] for name in wanted}))
