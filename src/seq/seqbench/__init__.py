"""seqbench: a black-box behavioural benchmark for learning algorithms.

It sees an opaque checkpoint and calls two processes only, `learn(model, examples) -> new model` and
`infer(model, requests) -> predictions`, and measures what was learned: prediction, retrieval,
length transfer, binding, multi-hop reasoning, composition, the use of auxiliary supervision,
robustness to label noise, one-example correction and checkpoint efficiency. Statistics come from
`seq.stats` and the report tables from `seq.report.tables`, shared with the rest of seq.

>>> from seq.seqbench import run
>>> result = run("specs/runs/full_v1.yaml", "count-lm", ["data/full.csv"], "runs/count-lm")
"""

from seq.seqbench.calibration import calibrate
from seq.seqbench.pipeline import RunResult, run
from seq.seqbench.protocol import RunFailed
from seq.seqbench.rereport import rereport
from seq.seqbench.screening import screen
from seq.seqbench.tasks import validate_files

__all__ = ["RunFailed", "RunResult", "calibrate", "rereport", "run", "screen", "validate_files"]
