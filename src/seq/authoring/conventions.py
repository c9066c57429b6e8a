"""A policy's interface conventions, in vla-eval's terms, for peers that check them.

vla-eval's model servers declare what each action component means and what each observation
component must be (`DimSpec`: dims, a format such as `delta_xyz`, a range); its client compares
them with its benchmark's before any episode and logs the mismatches. A `seq` policy declares
the same as a class attribute, and `seq`'s server sends it in the hello to vla-eval clients:

    class MyPolicy(seq.Policy):
        conventions = {
            "action": {"position": {"dims": 3, "format": "delta_xyz", "range": (-1, 1)}},
            "observation": {"image": {"dims": 0, "format": "rgb_hwc_uint8"}},
        }

A component may also be a vla-eval `DimSpec` (anything with `to_dict()`).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from seq.errors import SeqInputError

SIDES = ("action", "observation")


def _component(name: str, value: Any, where: str) -> dict[str, Any]:
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise SeqInputError(f"{where}: expected a mapping with dims and format, got {value!r}.")
    dims, fmt = value.get("dims"), value.get("format")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 0:
        raise SeqInputError(f"{where}: dims must be a non-negative integer, got {dims!r}.")
    if not isinstance(fmt, str) or not fmt:
        raise SeqInputError(f"{where}: format must be a non-empty string, got {fmt!r}.")
    spec: dict[str, Any] = {"name": str(value.get("name", name)), "dims": dims, "format": fmt}
    bounds = value.get("range")
    if bounds is not None:
        if len(bounds) != 2 or not all(isinstance(b, numbers.Real) for b in bounds):
            raise SeqInputError(f"{where}: range must be two numbers (low, high), got {bounds!r}.")
        spec["range"] = [float(bounds[0]), float(bounds[1])]
    accepts = value.get("accepts")
    if accepts is not None:
        if isinstance(accepts, str) or not all(isinstance(a, str) for a in accepts):
            raise SeqInputError(f"{where}: accepts must be a list of format strings, got {accepts!r}.")
        spec["accepts"] = sorted(accepts)
    if value.get("description"):
        spec["description"] = str(value["description"])
    unknown = set(value) - {"name", "dims", "format", "range", "accepts", "description"}
    if unknown:
        raise SeqInputError(f"{where}: unknown keys {', '.join(sorted(map(str, unknown)))}.")
    return spec


def parse_conventions(declared: Any, where: str) -> dict[str, dict[str, dict[str, Any]]]:
    """`{"action": {component: spec}, "observation": {…}}` in vla-eval's `DimSpec.to_dict` form."""
    if declared is None:
        return {}
    if not isinstance(declared, Mapping) or set(declared) - set(SIDES):
        raise SeqInputError(
            f"{where}: conventions must be a dict with the keys 'action' and/or 'observation', "
            f"got {declared!r}."
        )
    parsed: dict[str, dict[str, dict[str, Any]]] = {}
    for side, components in declared.items():
        if not isinstance(components, Mapping) or not components:
            raise SeqInputError(f"{where}: conventions[{side!r}] must be a non-empty dict of components.")
        parsed[side] = {
            str(name): _component(str(name), value, f"{where}: conventions[{side!r}][{name!r}]")
            for name, value in components.items()
        }
    return parsed
