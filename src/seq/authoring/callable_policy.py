"""A plain function as a policy: `seq.evaluate(lambda obs, **kw: model(obs), "metaworld")`.

What people try first while training. `policy_of_callable` wraps the function in an inline
`@seq.policy` object, so it runs through the same episode loop and record as any policy object:
its name is `callable-<the function's name>` (`callable-lambda` for a lambda) and its version is
its source text (`inspect.getsource`; the module and qualified name where the source cannot be
read), so an edited function is the next version and the manifest's sha256 names the code that ran.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Callable
from typing import Any

from seq.authoring.hooks import infer
from seq.authoring.policy import Policy, policy
from seq.errors import SeqInputError

PREFIX = "callable"
KEYWORDS = ("seed", "instruction")  # what the episode loop hands every act besides obs


class CallablePolicy(Policy):
    """The inline policy around one function: `function(obs)`, with `seed=` and `instruction=`
    where the function takes them (by name, or through `**kwargs`)."""

    function: Callable[..., Any]
    keywords: tuple[str, ...] = ()
    source: bytes = b""  # what identifies the function's version (`seq.registry.deploy`)

    @infer
    def infer(self, obs: Any, *, seed: int | None = None, instruction: str | None = None) -> Any:
        given = {"seed": seed, "instruction": instruction}
        return self.function(obs, **{name: given[name] for name in self.keywords})


def is_plain_callable(target: Any) -> bool:
    """A function (or any callable object) that is neither a class nor a `@seq.policy` object."""
    return callable(target) and not inspect.isclass(target) and not isinstance(target, Policy)


def _accepted(function: Callable[..., Any]) -> tuple[str, ...]:
    """The keywords of `KEYWORDS` that `function` takes; refused unless it takes one observation."""
    what = getattr(function, "__qualname__", type(function).__name__)
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return ()  # a builtin without a signature: give it the observation only
    positional = [
        p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    required = [p for p in positional if p.default is p.empty and p.kind is not p.VAR_POSITIONAL]
    if not positional or len(required) > 1:
        raise SeqInputError(
            f"policy {what}: a function used as a policy takes the observation as its one "
            "positional argument (and seed=, instruction= where it wants them), such as "
            "`lambda obs, **kw: model(obs)`."
        )
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return KEYWORDS
    names = {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return tuple(name for name in KEYWORDS if name in names and name != positional[0].name)


def _source(function: Callable[..., Any]) -> bytes:
    try:
        return inspect.getsource(function).strip().encode()
    except (OSError, TypeError):
        module = getattr(function, "__module__", None) or type(function).__module__
        return f"{module}.{getattr(function, '__qualname__', type(function).__qualname__)}".encode()


def _name(function: Callable[..., Any]) -> str:
    """`callable-<function name>` in kebab case (`<lambda>`: `lambda`)."""
    raw = getattr(function, "__name__", type(function).__name__)
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", raw)
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-") or "function"
    return f"{PREFIX}-{slug}"


def policy_of_callable(function: Callable[..., Any]) -> CallablePolicy:
    """An inline `@seq.policy` object that calls `function` for every act."""
    keywords = _accepted(function)
    source = _source(function)
    name = _name(function)
    digest = hashlib.sha256(source).hexdigest()[:12]
    # one class per function: a policy's name lives on its class (`@seq.policy`)
    cls = type(f"CallablePolicy_{digest}", (CallablePolicy,), {"__module__": __name__})
    instance = policy(name=name)(cls)()
    instance.function, instance.keywords, instance.source = function, keywords, source
    return instance
