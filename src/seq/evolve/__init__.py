"""`seq evolve`: a benchmark that learns from its failures, built on the record, the
registry and the engine: traces → failure clusters → mutated conditions → critics and gates →
a new version of the benchmark."""

from seq.evolve.commands import diff, prune, review_decide, review_list, status
from seq.evolve.evals import Settings
from seq.evolve.gates import Thresholds
from seq.evolve.hard_cases import export_hard_cases
from seq.evolve.llm import Deferred, Endpoint
from seq.evolve.log_report import markdown as report
from seq.evolve.log_report import report_data, report_json
from seq.evolve.log_report_html import write_html as report_html
from seq.evolve.loop import run

__all__ = [
    "Deferred",
    "Endpoint",
    "Settings",
    "Thresholds",
    "diff",
    "export_hard_cases",
    "prune",
    "report",
    "report_data",
    "report_json",
    "report_html",
    "review_decide",
    "review_list",
    "run",
    "status",
]
