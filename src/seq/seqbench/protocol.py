"""The process protocol: the two calls, their JSONL files, and the checks the runner makes around them.

```
ALGO learn --model-in M --examples EX.jsonl --model-out M2 --budget B.json --seed S
ALGO infer --model M --requests REQ.jsonl --output PRED.jsonl --budget B.json
```

- examples: `{"id": "e000001", "input": "fact k3", "target": "v7"}`
- requests: `{"id": "r000001", "kind": "generate", "input": "…"}` or
  `{"id": "r000002", "kind": "score", "input": "…", "target": "…"}`
- predictions: `{"id": "r000001", "output": "…"}` or `{"id": "r000002", "log_probability": -0.7}`,
  the natural log of the normalized conditional probability of `target` given `input`; `null` means
  exactly zero. One line per request, any order.

Ids are opaque, so an algorithm learns nothing from them about the family or condition of a row.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from pathlib import Path

from seq.seqbench.algorithm import Algorithm
from seq.seqbench.budgets import FAILED, OK, OVER_BUDGET, Budget, run_within_budget, stderr_tail
from seq.seqbench.checkpoint import changes, fingerprint, size_bytes
from seq.seqbench.tasks import TaskRow

GENERATE, SCORE = "generate", "score"


class RunFailed(RuntimeError):
    """The run cannot go on: the algorithm broke the protocol in a way that voids its results.

    The message is one sentence naming what happened (for example the checkpoint file that `infer`
    changed); the CLI prints it and exits with code 1.
    """


@dataclass(frozen=True)
class Request:
    """One line of a requests file, and the row (and candidate) it asks about."""

    id: str
    kind: str
    input: str
    row_id: str
    target: str | None = None

    def to_json(self) -> dict:
        line = {"id": self.id, "kind": self.kind, "input": self.input}
        if self.target is not None:
            line["target"] = self.target
        return line


@dataclass
class CallRecord:
    """One learn or infer call: what it was given, how it ended, what it cost."""

    operation: str
    seed: int
    stage: str
    status: str
    reason: str = ""
    exit_code: int | None = None
    process_s: float = 0.0
    call_s: float = 0.0
    max_rss_mb: float = 0.0
    examples: int = 0
    requests: int = 0
    checkpoint_bytes: int | None = None
    stderr: str = ""
    problems: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)

    @property
    def overhead_s(self) -> float:
        """The runner's own time around the process: files, hashes, parsing."""
        return max(0.0, self.call_s - self.process_s)

    def to_json(self) -> dict:
        return {
            "operation": self.operation,
            "seed": self.seed,
            "stage": self.stage,
            "status": self.status,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "process_s": round(self.process_s, 4),
            "call_s": round(self.call_s, 4),
            "overhead_s": round(self.overhead_s, 4),
            "max_rss_mb": round(self.max_rss_mb, 1),
            "examples": self.examples,
            "requests": self.requests,
            "checkpoint_bytes": self.checkpoint_bytes,
            "problems": self.problems,
            "stderr_tail": self.stderr,
            "argv": self.argv,
        }


def build_requests(rows: Sequence[TaskRow], generate: bool, score: bool) -> list[Request]:
    """A generate request per row and a score request per candidate (the target alone if none)."""
    requests: list[Request] = []
    for row in rows:
        if generate:
            requests.append(Request(f"r{len(requests):06d}", GENERATE, row.input, row.id))
        if score:
            for candidate in row.candidates or (row.target,):
                requests.append(Request(f"r{len(requests):06d}", SCORE, row.input, row.id, candidate))
    return requests


def write_requests(path: Path, requests: Sequence[Request]) -> Path:
    """The requests file; each distinct string is JSON-encoded once (the runner's hot path)."""
    encoded: dict[str, str] = {}

    def enc(text: str) -> str:
        value = encoded.get(text)
        if value is None:
            value = encoded[text] = encode_basestring(text)
        return value

    lines = []
    for r in requests:
        if r.target is None:
            lines.append(f'{{"id":"{r.id}","kind":"{r.kind}","input":{enc(r.input)}}}\n')
        else:
            lines.append(
                f'{{"id":"{r.id}","kind":"{r.kind}","input":{enc(r.input)},"target":{enc(r.target)}}}\n'
            )
    path.write_text("".join(lines))
    return path


def write_examples(path: Path, rows: Sequence[TaskRow]) -> Path:
    """The examples file: opaque ids, input and target only."""
    lines = [
        f'{{"id":"e{i:06d}","input":{encode_basestring(r.input)},"target":{encode_basestring(r.target)}}}\n'
        for i, r in enumerate(rows)
    ]
    path.write_text("".join(lines))
    return path


def read_predictions(path: Path, requests: Sequence[Request]) -> tuple[dict[str, object], list[str]]:
    """Predictions by request id, and every malformed line named by its line number."""
    kinds = {r.id: r.kind for r in requests}
    found: dict[str, object] = {}
    problems: list[str] = []
    if not path.is_file():
        return {}, [f"{path.name}: infer wrote no predictions file"]
    text = path.read_bytes().decode("utf-8", errors="replace")
    loads = json.loads
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        try:
            item = loads(line)
            key = item["id"]
            kind = kinds[key]
        except (ValueError, TypeError, KeyError, IndexError):
            problems.append(f"{path.name} line {number}: {_line_problem(line, kinds)}")
            continue
        if key in found:
            problems.append(f"{path.name} line {number}: id '{key}' answered twice")
            continue
        if kind == GENERATE:
            output = item.get("output")
            if type(output) is not str:
                problems.append(f"{path.name} line {number}: a generate answer needs a string 'output'")
                continue
            found[key] = " ".join(output.split())
        else:
            value = item.get("log_probability", "absent")
            if value is None:
                found[key] = None
            elif type(value) in (float, int) and value <= 1e-9 and not math.isnan(value):
                found[key] = min(0.0, float(value))
            else:
                problems.append(
                    f"{path.name} line {number}: 'log_probability' must be a number ≤ 0 or null, "
                    f"found {value!r}"
                )
    missing = len(kinds) - len(found)
    if missing and not problems:
        problems.append(f"{path.name}: {missing} request(s) got no answer")
    return found, problems


def _line_problem(line: str, kinds: dict[str, str]) -> str:
    """Why a predictions line could not be read, in words."""
    try:
        item = json.loads(line)
    except ValueError as error:
        return f"not valid JSON ({getattr(error, 'msg', error)})"
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        return "expected an object with a string 'id'"
    return f"id '{item['id']}' was not requested"


def learn(
    algorithm: Algorithm,
    model_in: Path,
    examples: Sequence[TaskRow],
    model_out: Path,
    budget: Budget,
    seed: int,
    stage: str,
    work: Path,
    examples_path: Path | None = None,
) -> CallRecord:
    """Run `learn`; over-budget or failed calls are recorded, a changed `--model-in` fails the run.

    `examples_path` is an examples file already written for these rows (shared across seeds).
    """
    started = time.perf_counter()
    work.mkdir(parents=True, exist_ok=True)
    if examples_path is None:
        examples_path = write_examples(work / "examples.jsonl", examples)
    budget_path = work / "learn-budget.json"
    budget_path.write_text(json.dumps(budget.to_json("learn")))
    argv = [*algorithm.command, "learn", "--model-in", str(model_in), "--examples", str(examples_path)]
    argv += ["--model-out", str(model_out), "--budget", str(budget_path), "--seed", str(seed)]
    before = fingerprint(model_in)
    outcome = run_within_budget(argv, budget, work / "learn-logs")
    changed = changes(before, fingerprint(model_in))
    if changed:
        raise RunFailed(f"learn (seed {seed}, stage {stage}) changed its input checkpoint: {changed[0]}.")
    record = CallRecord("learn", seed, stage, outcome.status, outcome.reason, outcome.exit_code, argv=argv)
    record.process_s, record.max_rss_mb, record.examples = outcome.wall_s, outcome.max_rss_mb, len(examples)
    if record.status == OK:
        if not model_out.exists():
            record.status, record.reason = FAILED, f"exited 0 but wrote no checkpoint at {model_out}"
        else:
            record.checkpoint_bytes = size_bytes(model_out)
            limit = budget.checkpoint_mb
            if limit is not None and record.checkpoint_bytes > limit * 2**20:
                record.status = OVER_BUDGET
                record.reason = (
                    f"checkpoint of {record.checkpoint_bytes / 2**20:.1f} MB over its budget of {limit:g} MB"
                )
    if record.status != OK:
        record.stderr = stderr_tail(work / "learn-logs")
    record.call_s = time.perf_counter() - started
    return record


def infer(
    algorithm: Algorithm,
    model: Path,
    requests: Sequence[Request],
    budget: Budget,
    seed: int,
    stage: str,
    work: Path,
    requests_path: Path | None = None,
) -> tuple[CallRecord, dict[str, object]]:
    """Run `infer` and parse its answers; a checkpoint changed by `infer` fails the run, naming the file.

    `requests_path` is a requests file already written for these requests (shared across seeds).
    """
    started = time.perf_counter()
    work.mkdir(parents=True, exist_ok=True)
    if requests_path is None:
        requests_path = write_requests(work / "requests.jsonl", requests)
    output_path = work / "predictions.jsonl"
    output_path.unlink(missing_ok=True)
    budget_path = work / "infer-budget.json"
    budget_path.write_text(json.dumps(budget.to_json("infer")))
    argv = [*algorithm.command, "infer", "--model", str(model), "--requests", str(requests_path)]
    argv += ["--output", str(output_path), "--budget", str(budget_path)]
    before = fingerprint(model)
    outcome = run_within_budget(argv, budget, work / "infer-logs")
    changed = changes(before, fingerprint(model))
    if changed:
        raise RunFailed(f"infer (seed {seed}, stage {stage}) changed the checkpoint: {changed[0]}.")
    record = CallRecord("infer", seed, stage, outcome.status, outcome.reason, outcome.exit_code, argv=argv)
    record.process_s, record.max_rss_mb, record.requests = outcome.wall_s, outcome.max_rss_mb, len(requests)
    predictions: dict[str, object] = {}
    if record.status == OK:
        predictions, record.problems = read_predictions(output_path, requests)
        if record.problems:
            record.status = FAILED
            record.reason = f"malformed predictions: {record.problems[0]}"
            predictions = {}
    if record.status != OK:
        record.stderr = stderr_tail(work / "infer-logs")
    record.call_s = time.perf_counter() - started
    return record, predictions
