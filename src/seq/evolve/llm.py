"""An OpenAI-compatible chat endpoint (`/v1/chat/completions`) for the semantic critic, the
instruction paraphrases and the clusters' summaries, through the `openai` client. Images go as
the chat protocol's image parts (base64 PNG data URLs), for a vision model.

`Endpoint.ask` returns the reply's text, or raises `Deferred` when the endpoint does not answer
within its timeout (or is unreachable): a candidate waiting on it is deferred, never failed.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class Deferred(Exception):
    """The endpoint did not answer in time; the question stands and may be asked again."""


@dataclass(frozen=True)
class Endpoint:
    """Where to ask: `base_url` (such as http://127.0.0.1:8000/v1), `model`, `timeout_s`.
    The API key is read from `api_key_env` (an endpoint that needs none gets a placeholder)."""

    base_url: str
    model: str = "gpt-4o-mini"
    timeout_s: float = 30.0
    api_key_env: str = "OPENAI_API_KEY"

    def ask(self, system: str, user: str, images: Sequence[bytes] = ()) -> str:
        """The reply to `user` (after `system`); `images` (PNG bytes) go with it as image parts
        of the user's message (`data:image/png;base64,...`), in order."""
        import openai

        content: Any = user
        if images:
            content = [{"type": "text", "text": user}] + [
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + base64.b64encode(image).decode()},
                }
                for image in images
            ]
        client = openai.OpenAI(
            base_url=self.base_url,
            api_key=os.environ.get(self.api_key_env) or "not-needed",
            timeout=self.timeout_s,
            max_retries=0,
        )
        try:
            reply = client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": content}],
                temperature=0.0,
            )
        except (openai.APITimeoutError, openai.APIConnectionError) as error:
            raise Deferred(f"{self.base_url} did not answer within {self.timeout_s:g} s ({error}).") from None
        return reply.choices[0].message.content or ""
