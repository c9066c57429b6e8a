"""Finding the MuJoCo model and data inside whatever a benchmark's reset returned.

gymnasium envs keep them on `env.unwrapped.model/data`, robosuite on `env.sim.model._model`,
dm_control on `physics.model.ptr`; rather than know every wrapper, walk the objects' attributes
(breadth first, a bounded number) until a `mujoco.MjModel` and `mujoco.MjData` turn up. The walk
starts from the innermost wrapped env. Strings naming an existing `.xml` file seen on the way are
kept: the model may have been parsed from one, and its relative asset paths start from there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_OBJECTS = 5000
_SKIP_TYPES = (int, float, bool, bytes, type(None))


@dataclass
class Found:
    model: Any
    data: Any
    xml_files: list[Path] = field(default_factory=list)


def find_mujoco(env: Any, mujoco: Any) -> Found:
    """The first MjModel and MjData reachable from `env`; ValueError when there is none."""
    model = data = None
    xml_files: list[Path] = []
    queue: deque[tuple[Any, int]] = deque((layer, 0) for layer in reversed(_wrapper_chain(env)))
    seen: set[int] = set()
    while queue and len(seen) < MAX_OBJECTS and (model is None or data is None):
        obj, depth = queue.popleft()
        if id(obj) in seen or isinstance(obj, _SKIP_TYPES):
            continue
        seen.add(id(obj))
        if isinstance(obj, mujoco.MjModel):
            model = model if model is not None else obj
            continue
        if isinstance(obj, mujoco.MjData):
            data = data if data is not None else obj
            continue
        if isinstance(obj, str):
            if obj.endswith(".xml") and len(obj) < 4096 and Path(obj).is_file():
                xml_files.append(Path(obj).resolve())
            continue
        if depth >= 6 or type(obj).__module__ in ("builtins", "numpy") and not isinstance(
            obj, (dict, list, tuple)
        ):
            continue
        for child in _children(obj):
            queue.append((child, depth + 1))
    if model is None or data is None:
        raise ValueError(
            f"no MuJoCo model and data were found inside the {type(env).__name__} the benchmark's reset "
            "returned; export ports MuJoCo benchmarks only."
        )
    return Found(model, data, list(dict.fromkeys(xml_files)))


def _wrapper_chain(env: Any) -> list[Any]:
    """`env` and what it wraps (`.env`, `.unwrapped`), outermost first. The walk starts from the
    innermost: a wrapper may hold a stale reference (robosuite builds a new sim on hard reset)."""
    chain = [env]
    while len(chain) < 20:
        inner = None
        for name in ("env", "unwrapped"):
            try:
                candidate = getattr(chain[-1], name, None)
            except Exception:  # a property that refuses to be read here
                candidate = None
            if candidate is not None and all(candidate is not seen for seen in chain):
                inner = candidate
                break
        if inner is None:
            return chain
        chain.append(inner)
    return chain


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return list(obj.values())[:200]
    if isinstance(obj, (list, tuple)):
        return list(obj)[:200]
    children = []
    for name in ("unwrapped", "env", "sim", "physics", "_physics"):
        try:
            value = getattr(obj, name, None)
        except Exception:  # a property that refuses to be read here
            value = None
        if value is not None:
            children.append(value)
    try:
        children.extend(vars(obj).values())
    except TypeError:
        pass
    return children
