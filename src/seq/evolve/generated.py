"""What the module of an evolved benchmark version calls: the base class with more suites.

An evolved version's code is a few generated lines (`seq.evolve.versions.source`): the base
benchmark class, the suites it adds as JSON, and a call of `evolved_class`. The class it returns
runs the base's hooks unchanged; only its conditions differ.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from seq.authoring.benchmark import SPEC_ATTRIBUTE, spec_of
from seq.authoring.conditions import Condition


def evolved_class(root_json: str, suites_json: str, manifest_json: str = "{}") -> type:
    """A subclass of the root benchmark class (`root_json`: its registry reference, a module or a
    stored file) whose suites are the root's plus those in `suites_json` (`{suite: [condition
    dicts]}`; a suite of the same name replaces the root's)."""
    from seq.registry.loader import load_class

    base: Any = load_class(json.loads(root_json))
    spec = spec_of(base)
    added = {
        suite: [Condition.from_dict({**c, "suite": c.get("suite") or suite}) for c in conditions]
        for suite, conditions in json.loads(suites_json).items()
    }
    cls = type(base.__name__, (base,), {"__module__": base.__module__, "__qualname__": base.__qualname__})
    setattr(cls, SPEC_ATTRIBUTE, replace(spec, suites={**spec.suites, **added}))
    cls.evolve_manifest = json.loads(manifest_json)  # type: ignore[attr-defined]
    return cls
