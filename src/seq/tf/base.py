"""The transform protocol: `apply(x)`, an optional `inverse(y)`, and a `label`.

An adapter's observation transforms receive the whole observation (a dict of arrays, or one array)
and return the next one; its action transforms receive one action (a 1-D array) at a time. Most of
`seq.tf` works on one key of a dict observation (`key="image"`), or on the whole value when `key`
is None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from seq.errors import SeqInputError
from seq.tf.labels import Label


class Transform:
    """Base class of every transform. Subclasses set `label` and define `apply(x)`; a transform
    labelled `seq.tf.lossless` must also define `inverse(y)` such that `inverse(apply(x)) == x`.

    `examples(rng)` may return inputs the registry can check the round trip on when the adapter
    declares no `observation_spec` / `action_spec`.
    """

    label: Label | None = None

    def apply(self, x: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no apply(x).")

    def invertible(self) -> bool:
        return callable(getattr(self, "inverse", None))

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return []

    def rounding_scale(self) -> float:
        """How large (in the input's units) the values its floating arithmetic rounds at can be
        beyond the input itself: an affine map's |offset / scale|. The round-trip check allows
        rounding at that scale only for seq.tf's own classes; for any other class it uses 0."""
        return 0.0

    @property
    def name(self) -> str:
        """How the report and errors name this transform."""
        return type(self).__name__

    def describe(self) -> dict[str, Any]:
        label = self.label
        return {
            "transform": self.name,
            "lossy": bool(label and label.lossy),
            "reason": label.reason if label else None,
        }

    def __repr__(self) -> str:
        return f"<{self.name}: {self.label}>"


def value_at(x: Any, key: str | None, where: str) -> Any:
    """`x[key]`, or `x` itself when `key` is None; a missing key names the keys there are."""
    if key is None:
        return x
    if not isinstance(x, Mapping):
        raise KeyError(f"{where} needs key {key!r}, but the value is a {type(x).__name__}, not a dict.")
    if key not in x:
        raise KeyError(f"{where} needs key {key!r}; the value has {', '.join(map(repr, x)) or 'no keys'}.")
    return x[key]


def put(x: Any, key: str | None, value: Any) -> Any:
    """A copy of dict `x` with `key` set to `value` (the same key order), or `value` when `key` is None."""
    if key is None:
        return value
    out = dict(x)
    out[key] = value
    return out


class KeyTransform(Transform):
    """A transform of one key's value (or of the whole value when `key` is None): subclasses define
    `forward(value)` and, when invertible, `backward(value)`."""

    def __init__(self, key: str | None, label: Label) -> None:
        if key is not None and not isinstance(key, str):
            raise SeqInputError(f"seq.tf: a key must be a string or None, got {key!r}.")
        self.key = key
        self.label = label

    def forward(self, value: Any) -> Any:
        raise NotImplementedError

    def apply(self, x: Any) -> Any:
        return put(x, self.key, self.forward(value_at(x, self.key, self.name)))

    def invertible(self) -> bool:
        return callable(getattr(self, "backward", None))

    def inverse(self, y: Any) -> Any:
        backward = getattr(self, "backward", None)
        if backward is None:
            raise NotImplementedError(f"{self.name} has no inverse ({self.label}).")
        return put(y, self.key, backward(value_at(y, self.key, self.name)))

    def keyed(self, value: Any) -> Any:
        """An example input holding `value` at this transform's key."""
        return value if self.key is None else {self.key: value}


class Custom(Transform):
    """A transform made of plain functions (see `custom`)."""

    def __init__(
        self,
        apply: Callable[[Any], Any],
        inverse: Callable[[Any], Any] | None,
        label: Label,
        name: str | None,
        examples: Callable[[np.random.Generator], list[Any]] | None,
    ) -> None:
        if not callable(apply):
            raise SeqInputError("seq.tf.custom: apply must be a function of one value.")
        if not isinstance(label, Label):
            raise SeqInputError("seq.tf.custom: label= must be seq.tf.lossless or seq.tf.lossy('reason').")
        self._apply, self._inverse, self._examples = apply, inverse, examples
        self.label = label
        self._name: str = name or str(getattr(apply, "__name__", "custom"))

    @property
    def name(self) -> str:
        return self._name

    def apply(self, x: Any) -> Any:
        return self._apply(x)

    def invertible(self) -> bool:
        return callable(self._inverse)

    def inverse(self, y: Any) -> Any:
        if self._inverse is None:
            raise NotImplementedError(f"{self.name} has no inverse.")
        return self._inverse(y)

    def examples(self, rng: np.random.Generator) -> list[Any]:
        return list(self._examples(rng)) if self._examples else []


def custom(
    apply: Callable[[Any], Any],
    inverse: Callable[[Any], Any] | None = None,
    *,
    label: Label,
    name: str | None = None,
    examples: Callable[[np.random.Generator], list[Any]] | None = None,
) -> Transform:
    """A transform from functions: `seq.tf.custom(f, f_inv, label=seq.tf.lossless, name="flip-y")`.
    A lossless label is checked: `inverse(apply(x))` must give `x` back."""
    return Custom(apply, inverse, label, name, examples)
