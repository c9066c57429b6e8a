"""Declared shapes: what a policy takes (`inputs`) and what an adapter expects to be given
(`observation_spec`, `action_spec`), and random samples drawn from such a declaration.

A declaration is a shape (`(8,)`, float64 implied), a `(shape, dtype)` pair (`((224, 224, 3), "uint8")`),
or a dict of either per observation key. In a policy's `inputs` a dimension may be None (any size),
and a key's declaration may be None (any value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from seq.errors import SeqInputError


@dataclass(frozen=True)
class ArraySpec:
    """One array: its shape (None: any size on that axis) and dtype (None: any)."""

    shape: tuple[int | None, ...] | None
    dtype: str | None = None

    def __str__(self) -> str:
        shape = "any shape" if self.shape is None else _shape_text(self.shape)
        return shape if self.dtype is None else f"{shape} {self.dtype}"

    def mismatch(self, value: Any) -> str | None:
        """Why `value` does not fit this declaration, or None when it does."""
        if self.shape is None and self.dtype is None:
            return None
        if isinstance(value, Mapping):
            return f"is a dict ({', '.join(map(repr, value))}), expected an array of {self}"
        array = np.asarray(value)
        if self.shape is not None and (
            len(array.shape) != len(self.shape)
            or any(
                want is not None and want != got for want, got in zip(self.shape, array.shape, strict=True)
            )
        ):
            return f"has shape {_shape_text(array.shape)}, expected {_shape_text(self.shape)}"
        if self.dtype is not None and array.dtype != np.dtype(self.dtype):
            return f"has dtype {array.dtype}, expected {self.dtype}"
        return None


Spec = ArraySpec | dict[str, ArraySpec]


def _shape_text(shape: Sequence[int | None]) -> str:
    return (
        "("
        + ", ".join("any" if d is None else str(d) for d in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple | list) and all(
        d is None or (isinstance(d, int | np.integer) and not isinstance(d, bool)) for d in value
    )


def _dtype_name(dtype: Any, where: str) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise SeqInputError(
            f"{where}: {dtype!r} is not a numpy dtype (such as 'uint8' or 'float32')."
        ) from None


def parse_array_spec(value: Any, where: str, *, wildcards: bool) -> ArraySpec:
    """One array declaration: a shape, or a (shape, dtype) pair; None means anything (if `wildcards`)."""
    if value is None and wildcards:
        return ArraySpec(None)
    if isinstance(value, ArraySpec):
        spec = value
    elif _is_shape(value):
        spec = ArraySpec(
            tuple(None if d is None else int(d) for d in value), None if wildcards else "float64"
        )
    elif isinstance(value, tuple | list) and len(value) == 2 and _is_shape(value[0]):
        spec = ArraySpec(tuple(None if d is None else int(d) for d in value[0]), _dtype_name(value[1], where))
    else:
        raise SeqInputError(
            f"{where}: {value!r} is not a shape such as (8,) "
            "or a (shape, dtype) pair such as ((224, 224, 3), 'uint8')."
        )
    if not wildcards and spec.shape is not None and any(d is None or d < 0 for d in spec.shape):
        raise SeqInputError(f"{where}: {value!r} needs every size given, to draw samples from it.")
    return spec


def parse_spec(value: Any, where: str, *, wildcards: bool = False) -> Spec:
    """A declaration: one array, or a dict of arrays by observation key."""
    if isinstance(value, Mapping):
        if not value:
            raise SeqInputError(f"{where}: an empty dict declares nothing; give each key's shape.")
        return {str(k): parse_array_spec(v, f"{where}[{k!r}]", wildcards=wildcards) for k, v in value.items()}
    return parse_array_spec(value, where, wildcards=wildcards)


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: Any) -> np.ndarray:
    """Random values over the dtype's range: integers across it (within ±2³¹), floats of mixed
    magnitudes (normal × 10^U(−3, 3)), so a rounding or a dropped bit shows in a round trip."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(info.min), -(2**31)), min(int(info.max), 2**31 - 1)
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "f":
        return (rng.normal(size=shape) * 10.0 ** rng.uniform(-3, 3, size=shape)).astype(dtype)
    if dtype.kind == "c":
        return (random_array(rng, shape, "float64") + 1j * random_array(rng, shape, "float64")).astype(dtype)
    raise SeqInputError(f"cannot draw samples of dtype {dtype}; declare a numeric dtype.")


def synthetic(spec: Spec, rng: np.random.Generator, count: int = 3) -> list[Any]:
    """`count` random values fitting a declaration (a dict of arrays, or one array)."""

    def one(array: ArraySpec) -> np.ndarray:
        shape = [size for size in array.shape or () if size is not None]
        assert array.shape is not None and len(shape) == len(array.shape)  # every size declared
        return random_array(rng, shape, array.dtype or "float64")

    if isinstance(spec, dict):
        return [{key: one(array) for key, array in spec.items()} for _ in range(count)]
    return [one(spec) for _ in range(count)]


def describe_value(value: Any) -> dict[str, str] | str:
    """A value's shape and dtype per key (or of the whole), as text for messages and manifests."""
    if isinstance(value, Mapping):
        return {str(k): _value_text(v) for k, v in value.items()}
    return _value_text(value)


def _value_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return "dict of " + ", ".join(map(repr, value))
    array = np.asarray(value)
    return f"{_shape_text(array.shape)} {array.dtype}"
