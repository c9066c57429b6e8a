"""Python twins of `seq secret set / ls / rm`: values given to simulators as environment
variables, stored 0600 under SEQ_HOME and never recorded or printed (`seq.isolation.secrets`).

>>> seq.secret.set("hf", env="HF_TOKEN")  # the value of $HF_TOKEN here
>>> [info.name for info in seq.secret.ls()]
"""

from __future__ import annotations

import os

from seq.errors import SeqInputError
from seq.isolation.secrets import SecretInfo, check_env_var, list_secrets, remove_secret, set_secret


def set(name: str, env: str, value: str | None = None) -> None:  # the twin of `seq secret set`
    """Store a secret that sets the environment variable `env`; its value is `value`, else the
    value of `env` in this process's environment."""
    check_env_var(env)
    value = value if value is not None else os.environ.get(env) or None
    if value is None:
        raise SeqInputError(
            f"secret {name}: no value; pass value= or set {env} in the environment "
            f"(echo ... | seq secret set {name} --env {env})."
        )
    set_secret(name, env, value)


def ls() -> list[SecretInfo]:
    """Every secret's name, the variable it sets and when it was set; never a value."""
    return list_secrets()


def rm(name: str) -> None:
    """Delete a secret."""
    remove_secret(name)
