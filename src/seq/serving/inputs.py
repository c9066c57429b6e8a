"""What a policy is handed: observations whose arrays it may write into.

Policies write into their input (MetaWorld's own scripted experts do), so every array a policy
receives, inline or served over any protocol, batched or not, must be writable and its own. A
served observation is decoded as zero-copy, read-only views of the received frame; an env may
hand out read-only arrays too. `writable` copies exactly those arrays, and rebuilds only the
containers that hold one: an observation that is already writable passes through untouched.
Served, the decoders already hand out arrays of their own (`codec.received_array`); inline, the
env's observation goes through `writable` on every act, so its common case is a fast path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_PLAIN = frozenset({str, bytes, int, float, bool, type(None), np.float64, np.float32, np.int64})


def writable(value: Any) -> Any:
    """`value` with every read-only numpy array (in dicts, lists and tuples, at any depth) replaced
    by a writable copy; `value` itself when it holds none."""
    kind = type(value)
    if kind is dict:
        for item in value.values():  # the common observation first: writable arrays and numbers
            leaf = type(item)
            if leaf is np.ndarray:
                if not item.flags.writeable:
                    break
            elif leaf not in _PLAIN:
                break
        else:
            return value
        changed = None
        for key, item in value.items():
            fixed = writable(item)
            if fixed is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = fixed
        return value if changed is None else changed
    if kind is np.ndarray:
        return value if value.flags.writeable else value.copy()
    if kind is list or kind is tuple:
        fixed_items = [writable(item) for item in value]
        if all(fixed is item for fixed, item in zip(fixed_items, value, strict=True)):
            return value
        return fixed_items if kind is list else tuple(fixed_items)
    if isinstance(value, np.ndarray):  # a subclass: copy keeps its type
        return value if value.flags.writeable else value.copy()
    if isinstance(value, dict):  # an OrderedDict, a gym Dict observation …
        items = {key: writable(item) for key, item in value.items()}
        if all(items[key] is item for key, item in value.items()):
            return value
        try:
            return type(value)(items)
        except TypeError:
            return items
    return value
