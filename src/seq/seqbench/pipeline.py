"""`seqbench run`: task files → selectors → learn/infer per seed and stage → the run directory.

The runner reads every task file once, resolves the spec's selectors, checks budgets that depend on
the data (examples per learn call) before the first call, then walks the stages per seed. A call that
fails or goes over budget is recorded and its items score zero; the run goes on and ends with status
`completed_with_failures` (exit 1). A checkpoint changed by a call voids the run at once (RunFailed).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from seq.errors import SeqInputError
from seq.seqbench.algorithm import Algorithm, load_algorithm
from seq.seqbench.budgets import OK
from seq.seqbench.calibration import load_thresholds
from seq.seqbench.outputs import RunContext, write_run
from seq.seqbench.protocol import CallRecord, build_requests, infer, learn, write_examples, write_requests
from seq.seqbench.scoring import prediction_records
from seq.seqbench.selectors import Selection, select_all, union
from seq.seqbench.specs import INITIAL, RunSpec, load_run_spec
from seq.seqbench.tasks import TaskRow, read_task_files

COMPLETED, COMPLETED_WITH_FAILURES = "completed", "completed_with_failures"


@dataclass
class RunResult:
    """Where the run was written and how it ended."""

    output: Path
    status: str
    calls: list[CallRecord]
    properties: list[dict]

    @property
    def failed_calls(self) -> list[CallRecord]:
        return [c for c in self.calls if c.status != OK]


def _prepare_output(output: Path) -> None:
    if output.exists() and any(output.iterdir()):
        if (output / "manifest.json").exists():
            raise SeqInputError(
                f"--output {output}: already holds a run; choose a new directory or delete it."
            )
        raise SeqInputError(f"--output {output}: exists and is not empty; choose a new directory.")
    output.mkdir(parents=True, exist_ok=True)


def _check_example_budget(spec: RunSpec, selections: dict[str, Selection]) -> None:
    limit = spec.learn_budget.examples
    for stage in spec.stages:
        if stage.learn_from is None or limit is None:
            continue
        count = len(union(selections, stage.learn_select))
        if count > limit:
            raise SeqInputError(
                f"{spec.path}: stage {stage.name} would send {count} examples to learn, over the "
                f"budget.learn.examples of {limit}."
            )


def _skipped(operation: str, seed: int, stage: str, reason: str, size: int = 0) -> CallRecord:
    """A call not made because the checkpoint it needed was never written (recorded, items score 0)."""
    record = CallRecord(operation, seed, stage, "skipped", reason)
    if operation == "infer":
        record.requests = size
    else:
        record.examples = size
    return record


def run_seed(
    spec: RunSpec,
    algorithm: Algorithm,
    selections: dict[str, Selection],
    seed: int,
    work: Path,
    say: Callable[[str], None],
    shared: dict[str, Path] | None = None,
) -> tuple[list[dict], list[CallRecord]]:
    """All stages for one seed: each stage's learn (if any) and infer, in order.

    `shared` caches the examples and requests files by stage: they are the same for every seed, so
    they are written once (under work/inputs/) and handed to every seed's calls.
    """
    shared = {} if shared is None else shared
    inputs = work / "inputs"
    manifest = algorithm.manifest
    models: dict[str, Path | None] = {INITIAL: algorithm.initial_model}
    sizes: dict[str, int | None] = {INITIAL: None}
    records: list[dict] = []
    calls: list[CallRecord] = []
    for stage in spec.stages:
        stage_dir = work / f"seed-{seed}" / stage.name
        if stage.learn_from is not None and manifest.learn:
            examples = union(selections, stage.learn_select)
            source = models[stage.learn_from]
            if source is None:
                call = _skipped(
                    "learn", seed, stage.name, f"no checkpoint from stage {stage.learn_from}", len(examples)
                )
                models[stage.name], sizes[stage.name] = None, None
            else:
                model_out = stage_dir / "model"
                key = f"{stage.name}/examples.jsonl"
                if key not in shared:
                    (inputs / stage.name).mkdir(parents=True, exist_ok=True)
                    shared[key] = write_examples(inputs / key, examples)
                call = learn(
                    algorithm,
                    source,
                    examples,
                    model_out,
                    spec.learn_budget,
                    seed,
                    stage.name,
                    stage_dir,
                    shared[key],
                )
                models[stage.name] = model_out if call.status == OK else None
                sizes[stage.name] = call.checkpoint_bytes
            calls.append(call)
            say(
                f"seed {seed} · {stage.name} · learn {len(examples)} examples: "
                f"{call.status} {call.process_s:.2f} s"
            )
        else:
            origin = stage.learn_from if stage.learn_from is not None else stage.model
            models[stage.name], sizes[stage.name] = models[origin], sizes[origin]
        rows: list[TaskRow] = union(selections, stage.infer_select)
        if not rows:
            continue
        requests = build_requests(rows, manifest.generate, manifest.score)
        model = models[stage.name]
        if model is None:
            answers: dict[str, object]
            call, answers = (
                _skipped("infer", seed, stage.name, "no checkpoint to infer with", len(requests)),
                {},
            )
        else:
            key = f"{stage.name}/requests.jsonl"
            if key not in shared:
                (inputs / stage.name).mkdir(parents=True, exist_ok=True)
                shared[key] = write_requests(inputs / key, requests)
            call, answers = infer(
                algorithm, model, requests, spec.infer_budget, seed, stage.name, stage_dir, shared[key]
            )
        calls.append(call)
        say(
            f"seed {seed} · {stage.name} · infer {len(requests)} requests: "
            f"{call.status} {call.process_s:.2f} s"
        )
        records += prediction_records(
            rows, requests, answers, call.status == OK, seed, stage.name, sizes[stage.name]
        )
    return records, calls


def broadcast(records: list[dict], seeds: Sequence[int]) -> list[dict]:
    """Copies of a seed-invariant algorithm's records for the other seeds, marked as broadcast."""
    copies = []
    for seed in seeds:
        copies += [{**r, "seed": seed, "broadcast": True} for r in records]
    return copies


def run(
    spec_path: Path,
    algorithm_ref: str,
    task_paths: Sequence[Path],
    output: Path,
    seeds: Sequence[int] | None = None,
    calibration: Path | None = None,
    keep_checkpoints: bool = True,
    say: Callable[[str], None] = lambda _: None,
) -> RunResult:
    """Run one algorithm through one spec and write the run directory."""
    started = time.time()
    spec = load_run_spec(Path(spec_path))
    algorithm = load_algorithm(algorithm_ref)
    if not task_paths:
        raise SeqInputError("seqbench run needs at least one --tasks CSV file.")
    rows = read_task_files([Path(p) for p in task_paths])
    selections = select_all(rows, spec)
    _check_example_budget(spec, selections)
    seeds = list(seeds) if seeds else list(spec.seeds)
    output = Path(output)
    _prepare_output(output)
    independent = seeds[:1] if algorithm.manifest.seed_invariant else seeds
    records: list[dict] = []
    calls: list[CallRecord] = []
    work = output / "work"
    shared: dict[str, Path] = {}
    for seed in independent:
        seed_records, seed_calls = run_seed(spec, algorithm, selections, seed, work, say, shared)
        records += seed_records
        calls += seed_calls
    if algorithm.manifest.seed_invariant and len(seeds) > 1:
        records += broadcast(records, seeds[1:])
    if not keep_checkpoints:
        shutil.rmtree(work, ignore_errors=True)
    status = COMPLETED if all(c.status == OK for c in calls) else COMPLETED_WITH_FAILURES
    thresholds = load_thresholds(calibration or spec.calibration, spec.name, spec.version, spec.sha256)
    context = RunContext(
        spec=spec,
        algorithm=algorithm,
        task_paths=[Path(p) for p in task_paths],
        rows=rows,
        selections=selections,
        seeds=seeds,
        independent_seeds=independent,
        records=records,
        calls=calls,
        thresholds=thresholds,
        calibration_path=calibration or spec.calibration,
        started=started,
        ended=time.time(),
        status=status,
    )
    properties = write_run(output, context)
    return RunResult(output, status, calls, properties)
