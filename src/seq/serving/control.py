"""The server's runtime tuning over HTTP, as vla-eval's model servers offer it (`/config`).

`GET /config` (or `POST`, the values in the query string: vla-eval's server reads the query of
either) answers `{"applied": {...}, "config": {"max_batch_size": …, "max_wait_time": …}}`;
`/config?max_batch_size=8&max_wait_time=0.02` sets those first. A key that is not one of these,
or a value of the wrong type or out of range, is listed under `errors`; the valid keys of the same
request are still applied, and a request that applied nothing but had errors is answered 422
`{"errors": [...]}`. `max_wait_time` is in seconds, as vla-eval has it (`seq serve`'s
`max_wait_ms` / 1000). The `token` query parameter is the client's credential, not a setting.
"""

from __future__ import annotations

import http
import logging
import math
import urllib.parse
from collections.abc import Callable
from typing import Any

log = logging.getLogger("seq.serving")


def _batch_size(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"max_batch_size must be at least 1, got {value}")
    return value


def _wait_time(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"max_wait_time must be a number of seconds of 0 or more, got {text!r}")
    return value


CONFIG_KEYS: dict[str, Callable[[str], Any]] = {"max_batch_size": _batch_size, "max_wait_time": _wait_time}


def answer_config(
    query: str, current: Callable[[], dict[str, Any]], apply: Callable[[str, Any], None]
) -> tuple[http.HTTPStatus, dict[str, Any]]:
    """The status and body of a `/config` request with this query string; `apply(key, value)`
    sets each valid key, `current()` reads the settings back."""
    applied: dict[str, Any] = {}
    errors: list[str] = []
    for key, values in urllib.parse.parse_qs(query).items():
        if key == "token":
            continue
        cast = CONFIG_KEYS.get(key)
        if cast is None:
            log.warning("GET /config: unknown key %r ignored", key[:80])
            errors.append(f"unknown key: {key[:80]}")
            continue
        try:
            value = cast(values[-1])  # the last value wins, as in vla-eval
        except (ValueError, TypeError, OverflowError) as error:
            errors.append(f"bad value for {key}: {error}")
            continue
        apply(key, value)
        applied[key] = value
    if errors and not applied:
        return http.HTTPStatus.UNPROCESSABLE_ENTITY, {"errors": errors}
    body: dict[str, Any] = {"applied": applied, "config": current()}
    if errors:
        body["errors"] = errors
    if applied:
        log.info("GET /config applied=%s current=%s", applied, body["config"])
    return http.HTTPStatus.OK, body
