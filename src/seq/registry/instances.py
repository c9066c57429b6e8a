"""A policy instance as a process runs it (inline in a worker, or in a server's replica): made,
handed what it declared, loaded.

- `models=`: `instance.chat`, a `seq.Chat` for exactly those models (`seq.isolation.models`);
- `weights=`: the volume's current version, read-only, handed to `@seq.load` as `weights_dir`
  (None when the policy declares no weights).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from seq.authoring.policy import Policy, PolicySpec, policy_spec_of

log = logging.getLogger("seq.registry")


def weights_dir(spec: PolicySpec, seal: bool = False) -> Path | None:
    """The folder of the policy's `weights=` volume (its current version), or None. `seal`: bind
    it read-only in this thread's own mount namespace (a worker process's main thread), so not
    even root writes to it; otherwise its files are read-only by mode."""
    declared = spec.declared.get("weights")
    if declared is None:
        return None
    from seq.isolation.volumes import current_volume

    volume = current_volume(declared["volume"])
    if seal:
        from seq.isolation.assets import seal_read_only

        log.info("policy %s: %s", spec.name, seal_read_only(volume.path))
    return volume.path


def equip(instance: Policy, spec: PolicySpec) -> None:
    """Give an instance the chat client of its `models=` (an object made by the caller too)."""
    models = spec.declared.get("models")
    if models and getattr(instance, "chat", None) is None:
        from seq.isolation.models import chat_for

        instance.chat = chat_for(list(models), spec.name)


def load_policy(cls: type, seal_weights: bool = False) -> Any:
    """A new instance of policy class `cls`, equipped and loaded (`@seq.load(weights_dir)`)."""
    spec = policy_spec_of(cls)
    instance = cls()
    equip(instance, spec)
    if "load" in spec.hooks:
        getattr(instance, spec.hooks["load"])(weights_dir(spec, seal_weights))
    return instance
