"""Parsing of list-valued CLI options (`--seeds 0-4,9`, `--tasks a,b`, `--param k=v`)."""

from __future__ import annotations

from seq.errors import SeqInputError


def split_list(values: list[str] | None) -> list[str] | None:
    """`--tasks a,b --tasks c` → `["a", "b", "c"]`."""
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def parse_seeds(values: list[str] | None) -> list[int] | None:
    """`--seeds 0,1,2`, `--seeds 0-4` (inclusive) or repeated `--seeds`."""
    parts = split_list(values)
    if parts is None:
        return None
    seeds: list[int] = []
    for part in parts:
        try:
            if "-" in part.lstrip("-"):
                first, last = part.split("-", 1) if not part.startswith("-") else (part, part)
                seeds.extend(range(int(first), int(last) + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise SeqInputError(
                f"--seeds {part}: expected integers like 0,1,2 or a range like 0-4."
            ) from None
    return seeds


def parse_params(values: list[str] | None, option: str = "--param") -> dict[str, str]:
    """`--param noise=0.3 --param eval.steps_per_query=5` → `{"noise": "0.3", ...}`."""
    params: dict[str, str] = {}
    for value in values or []:
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise SeqInputError(f"--param {value}: expected NAME=VALUE, such as noise=0.3.")
        params[key.strip()] = raw
    return params


def parse_sweep(values: list[str] | None) -> dict[str, list[str]] | None:
    """`--sweep policy.noise=0.0,0.5,1.0` → `{"policy.noise": ["0.0", "0.5", "1.0"]}`."""
    if not values:
        return None
    sweep: dict[str, list[str]] = {}
    for key, raw in parse_params(values, "--sweep").items():
        parts = [part.strip() for part in raw.split(",") if part.strip()]
        if not parts:
            raise SeqInputError(f"--sweep {key}=: expected values, such as {key}=0.0,0.5,1.0.")
        sweep[key] = parts
    return sweep
