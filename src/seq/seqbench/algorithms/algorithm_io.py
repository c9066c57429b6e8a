"""The algorithm side of the seqbench protocol, shared by the reference algorithms.

It imports nothing from seq, so a reference algorithm is a black box like any other: a script that
reads the files the runner names on its command line and writes the ones it asks for.

    ALGO learn --model-in M --examples EX.jsonl --model-out M2 --budget B.json --seed S
    ALGO infer --model M --requests REQ.jsonl --output PRED.jsonl --budget B.json

Checkpoints of the references are one gzip-compressed JSON file (a plain JSON initial file is read too).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable
from pathlib import Path

Learn = Callable[[dict, list[dict], int, dict], dict]
Infer = Callable[[dict, list[dict]], list[dict]]


def read_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_jsonl(path: str, items: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, separators=(",", ":")) + "\n")


def load_model(path: str) -> dict:
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw or b"{}")


def save_model(path: str, model: dict) -> None:
    data = json.dumps(model, separators=(",", ":"), sort_keys=True).encode()
    Path(path).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="A seqbench algorithm (learn / infer).")
    commands = parser.add_subparsers(dest="operation", required=True)
    learn = commands.add_parser("learn")
    learn.add_argument("--model-in", required=True)
    learn.add_argument("--examples", required=True)
    learn.add_argument("--model-out", required=True)
    learn.add_argument("--budget", required=True)
    learn.add_argument("--seed", type=int, required=True)
    infer = commands.add_parser("infer")
    infer.add_argument("--model", required=True)
    infer.add_argument("--requests", required=True)
    infer.add_argument("--output", required=True)
    infer.add_argument("--budget", required=True)
    return parser


def main(learn: Learn, infer: Infer, argv: list[str] | None = None) -> int:
    """Dispatch one protocol call to `learn(model, examples, seed, budget)` or `infer(model, requests)`."""
    args = _parser().parse_args(argv)
    budget = json.loads(Path(args.budget).read_text())
    if args.operation == "learn":
        model = learn(load_model(args.model_in), read_jsonl(args.examples), args.seed, budget)
        save_model(args.model_out, model)
    else:
        write_jsonl(args.output, infer(load_model(args.model), read_jsonl(args.requests)))
    return 0


def run(learn: Learn, infer: Infer) -> None:
    sys.exit(main(learn, infer))
