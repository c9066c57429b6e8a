"""The round-trip check: a transform labelled lossless must give its input back through `inverse`.

"Back" means: the same keys, the same shapes, and the same values — integers, booleans and text
exactly; floating values within the rounding of their own precision,
|x′ − x| ≤ 64·ε·max(1, max|x| + r), with ε the machine epsilon of x's dtype (of x′'s when x is an
integer) and r the transform's `rounding_scale()` (an affine map's |offset / scale|, trusted only
from seq.tf's own classes, else 0). So a float64 → float32 cast, a rounding, a dropped key or entry
all fail it, and (x − m) / s · s + m passes.

The output of `apply` is copied into plain dicts and arrays before `inverse` sees it, and a second
input goes through `apply` first, so an inverse cannot read what it needs from anything but the
output.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from seq.tf.base import Transform
from seq.tf.labels import Label

ULPS = 64


@dataclass(frozen=True)
class Failure:
    """Why one transform of a chain failed its check."""

    index: int
    transform: str
    reason: str


def plain(value: Any) -> Any:
    """A deep copy made only of dicts, lists, tuples, plain ndarrays and Python scalars."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (
            type(value)(plain(v) for v in value)
            if type(value) in (list, tuple)
            else [plain(v) for v in value]
        )
    if isinstance(value, np.ndarray | np.generic):
        return np.array(value, copy=True, subok=False)
    return copy.deepcopy(value)


def difference(x: Any, back: Any, path: str = "", rounding: float = 0.0) -> str | None:
    """How `back` differs from `x` (see the module), or None when it gives `x` back; `rounding` is r."""
    at = f" at {path}" if path else ""
    if isinstance(x, Mapping):
        if not isinstance(back, Mapping):
            return f"a dict came back as a {type(back).__name__}{at}"
        missing, extra = [k for k in x if k not in back], [k for k in back if k not in x]
        if missing:
            return f"key {missing[0]!r} did not come back{at}"
        if extra:
            return f"key {extra[0]!r} came back but was not given{at}"
        for key in x:
            found = difference(x[key], back[key], f"{path}[{key!r}]" if path else repr(key), rounding)
            if found:
                return found
        return None
    if isinstance(x, str | bytes) or x is None:
        return None if x == back else f"{x!r} came back as {back!r}{at}"
    try:
        a, b = np.asarray(x), np.asarray(back)
    except Exception:
        return None if x == back else f"the value came back different{at}"
    if a.shape != b.shape:
        return f"shape {a.shape} came back as {b.shape}{at}"
    if a.dtype.kind in "OUS" or b.dtype.kind in "OUS":
        return None if np.array_equal(a, b) else f"the values came back different{at}"
    floating = a if a.dtype.kind in "fc" else b if b.dtype.kind in "fc" else None
    if floating is None:
        if np.array_equal(a, b):
            return None
        return f"the values came back different{at} (e.g. {a[a != b].flat[0]!r} as {b[a != b].flat[0]!r})"
    a64, b64 = (
        a.astype(np.complex128 if "c" in a.dtype.kind + b.dtype.kind else np.float64),
        b.astype(np.complex128 if "c" in a.dtype.kind + b.dtype.kind else np.float64),
    )
    same_nan = np.isnan(a64) == np.isnan(b64)
    if not np.all(same_nan):
        return f"NaN values came back elsewhere{at}"
    finite = np.isfinite(a64)
    if not np.array_equal(a64[~finite & ~np.isnan(a64)], b64[~finite & ~np.isnan(a64)]):
        return f"infinite values came back different{at}"
    if not finite.any():
        return None
    scale = max(1.0, float(np.max(np.abs(a64[finite]))) + rounding)
    tolerance = ULPS * float(np.finfo(floating.dtype).eps) * scale
    error = float(np.max(np.abs(a64[finite] - b64[finite])))
    if error > tolerance:
        return f"the values came back off by up to {error:.3g}{at} (allowed: {tolerance:.1e})"
    return None


def _decoy(x: Any) -> Any:
    """Another input of the same structure: each array reversed along its flattened order."""
    if isinstance(x, Mapping):
        return {k: _decoy(v) for k, v in x.items()}
    if isinstance(x, np.ndarray) and x.size > 1:
        return x.ravel()[::-1].reshape(x.shape).copy()
    return x


def round_trip(transform: Transform, inputs: Sequence[Any]) -> str | None:
    """Why a lossless-labelled transform fails its round trip on `inputs`, or None when it passes."""
    if not transform.invertible():
        return "it has no inverse"
    if not inputs:
        return (
            "there is nothing to check it on: declare the adapter's "
            "observation_spec / action_spec, or give the transform examples()"
        )
    trusted = type(transform).__module__.startswith("seq.tf.")
    rounding = float(transform.rounding_scale()) if trusted else 0.0
    inputs = [plain(x) for x in inputs]
    if len(inputs) == 1:
        inputs.append(_decoy(inputs[0]))
    outputs: list[Any] = []
    for x in inputs:
        try:
            outputs.append(plain(transform.apply(plain(x))))
        except Exception as error:
            if outputs:  # a decoy outside the transform's domain proves nothing either way
                outputs.append(None)
                continue
            return f"apply raised {type(error).__name__}: {error}"
    for x, y in reversed(list(zip(inputs, outputs, strict=True))):
        if y is None:
            continue
        try:
            back = transform.inverse(y)  # type: ignore[attr-defined]
        except Exception as error:
            return f"inverse raised {type(error).__name__}: {error}"
        found = difference(x, back, rounding=rounding)
        if found:
            return f"inverse(apply(x)) does not give x back: {found}"
    return None


def check_chain(
    transforms: Sequence[Transform], samples: Sequence[Any], rng: np.random.Generator
) -> tuple[list[Any], Failure | None]:
    """Run `samples` through the chain, checking every transform labelled lossless on the values
    that reach it (and on its own `examples`). Returns the chain's outputs and the first failure."""
    values = [plain(s) for s in samples]
    for index, transform in enumerate(transforms):
        label = transform.label
        if not isinstance(label, Label):
            return values, Failure(
                index, transform.name, "it has no label: set seq.tf.lossless or seq.tf.lossy('reason')"
            )
        if not label.lossy:
            try:
                examples = list(transform.examples(rng))
            except Exception as error:
                return values, Failure(
                    index, transform.name, f"examples() raised {type(error).__name__}: {error}"
                )
            found = round_trip(copy.deepcopy(transform), values + examples)
            if found:
                return values, Failure(index, transform.name, f"it is labelled lossless, but {found}")
        try:
            values = [transform.apply(v) for v in values]
        except Exception as error:
            return values, Failure(index, transform.name, f"apply raised {type(error).__name__}: {error}")
    return values, None
