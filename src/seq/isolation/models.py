"""Chat models a policy may call (`models=`): where each one is served, and the client `seq` hands
the policy for exactly those.

Local-first: a model is any OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, a hosted API),
named in `SEQ_HOME/models.toml`, its key a `seq` secret (`seq secret set NAME --env VAR`):

    [models.planner]
    base_url = "http://127.0.0.1:8000/v1"   # the endpoint's /v1
    model = "Qwen/Qwen3-8B"                 # the endpoint's name for it (default: the key, planner)
    key_secret = "planner-key"              # optional: the secret that holds its API key
    reasoning = true                        # send reasoning={"effort": "none"} (default: true)
    timeout_s = 60                          # one call's limit (default: 60)

`Chat` is called through the `openai` client library (the `composite` extra).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import seq_home

CONFIG_NAME = "models.toml"
NO_REASONING = {"effort": "none"}  # a planner wants its one short line now, not a chain of thought


@dataclass(frozen=True)
class ChatEndpoint:
    """One declared model, resolved: where it is served and under which name."""

    name: str
    base_url: str
    model: str
    key_secret: str | None = None
    reasoning: bool = True
    timeout_s: float = 60.0


def _config() -> tuple[dict[str, Any], str]:
    path = seq_home() / CONFIG_NAME
    if not path.is_file():
        return {}, str(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), str(path)
    except tomllib.TOMLDecodeError as error:
        raise SeqInputError(f"{path}: not valid TOML ({error}).") from None
    except UnicodeDecodeError as error:
        raise SeqInputError(f"{path}: not valid TOML, which is UTF-8 text ({error}).") from None
    except OSError as error:
        raise SeqInputError(f"{path} cannot be read: {error.strerror or error}.") from None


def chat_endpoints(names: list[str], policy: str) -> dict[str, ChatEndpoint]:
    """Each model of `names` as configured in `SEQ_HOME/models.toml`; one missing or malformed
    refuses the policy, naming the file and the key to add."""
    config, path = _config()
    models = config.get("models", {})
    if not isinstance(models, dict):
        raise SeqInputError(f"{path}: [models] must be a table of models, e.g. [models.planner].")
    endpoints = {}
    for name in names:
        entry = models.get(name)
        if not isinstance(entry, dict) or not isinstance(entry.get("base_url"), str):
            raise SeqInputError(
                f"policy {policy} declares models=[{name!r}], and {path} has no [models.{name}] with a "
                'base_url; add one (base_url = "http://HOST:PORT/v1").'
            )
        key_secret, timeout_s = entry.get("key_secret"), entry.get("timeout_s", 60.0)
        if key_secret is not None and not isinstance(key_secret, str):
            raise SeqInputError(
                f"{path}: [models.{name}] key_secret must name a seq secret, got {key_secret!r}."
            )
        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, int | float)
            or not (timeout_s > 0 and math.isfinite(timeout_s))
        ):
            raise SeqInputError(
                f"{path}: [models.{name}] timeout_s must be a positive number of seconds, got {timeout_s!r}."
            )
        if not isinstance(entry.get("reasoning", True), bool):
            raise SeqInputError(f"{path}: [models.{name}] reasoning must be true or false.")
        endpoints[name] = ChatEndpoint(
            name=name,
            base_url=entry["base_url"],
            model=str(entry.get("model", name)),
            key_secret=key_secret,
            reasoning=entry.get("reasoning", True),
            timeout_s=float(timeout_s),
        )
    return endpoints


def _key(endpoint: ChatEndpoint) -> str:
    if endpoint.key_secret is None:
        return "none"  # a local server asks for no key; the client library wants some text
    from seq.isolation.secrets import secret_environment

    return next(iter(secret_environment([endpoint.key_secret]).values()))


class Chat:
    """The chat models a policy declared in `models=`, and no others: `self.chat(model, messages,
    **options)` returns the reply's text; `complete` the whole completion; `client(model)` the
    `openai.OpenAI` client of that model's endpoint, for anything else.

    `reasoning={"effort": "none"}` is sent with every call unless the call says otherwise or the
    model's configuration says `reasoning = false`; an endpoint that refuses the field is asked
    again without it, and not sent it again.
    """

    def __init__(self, endpoints: dict[str, ChatEndpoint]) -> None:
        self.endpoints = endpoints
        self._clients: dict[str, Any] = {}
        self._no_reasoning_field: set[str] = set()
        for model in endpoints:  # made now, as the policy loads: a first plan need not wait for them
            self.client(model)

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(self.endpoints)

    def client(self, model: str) -> Any:
        """The `openai.OpenAI` client of `model`'s endpoint."""
        endpoint = self._endpoint(model)
        if model not in self._clients:
            try:
                import openai
            except ImportError:
                raise SeqInputError(
                    "models= calls chat models through the openai library: pip install 'seq[composite]'."
                ) from None
            self._clients[model] = openai.OpenAI(
                base_url=endpoint.base_url, api_key=_key(endpoint), timeout=endpoint.timeout_s
            )
        return self._clients[model]

    def _endpoint(self, model: str) -> ChatEndpoint:
        if model not in self.endpoints:
            declared = ", ".join(self.endpoints) or "none"
            raise PermissionError(
                f"model {model!r} is not declared in this policy's models= (declared: {declared})."
            )
        return self.endpoints[model]

    def complete(self, model: str, messages: list[dict[str, Any]], **options: Any) -> Any:
        """The chat completion of `messages` by `model` (an `openai` `ChatCompletion`)."""
        endpoint = self._endpoint(model)
        client = self.client(model)
        reasoning = options.pop("reasoning", NO_REASONING if endpoint.reasoning else None)
        extra_body = dict(options.pop("extra_body", None) or {})
        if reasoning is not None and model not in self._no_reasoning_field:
            extra_body["reasoning"] = reasoning
        try:
            return client.chat.completions.create(
                model=endpoint.model, messages=messages, extra_body=extra_body or None, **options
            )
        except Exception as error:
            if "reasoning" not in extra_body or not _refuses_reasoning(error):
                raise
            self._no_reasoning_field.add(model)
            del extra_body["reasoning"]
            return client.chat.completions.create(
                model=endpoint.model, messages=messages, extra_body=extra_body or None, **options
            )

    def __call__(self, model: str, messages: list[dict[str, Any]], **options: Any) -> str:
        """The text of `model`'s reply to `messages` (empty when it said nothing)."""
        completion = self.complete(model, messages, **options)
        return (completion.choices[0].message.content or "").strip()


def _refuses_reasoning(error: Exception) -> bool:
    """Whether an endpoint refused the request for its `reasoning` field (a 400 naming it)."""
    return getattr(error, "status_code", None) in (400, 422) and "reasoning" in str(error).lower()


def chat_for(names: list[str], policy: str) -> Chat:
    """The client of a policy that declares `models=names`."""
    return Chat(chat_endpoints(names, policy))
