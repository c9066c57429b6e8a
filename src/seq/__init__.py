"""seq: evaluate robot policies on simulated benchmarks, with honest statistics.

Write a benchmark and a policy as decorated classes; `seq` runs the episodes in parallel, records
each one in SQLite as it finishes, and reports every metric with its confidence interval.

>>> import seq
>>> report = seq.eval.run("metaworld-expert", benchmark="metaworld")
>>> report.print()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from seq._lazy import lazy_exports

# The flat API, imported on first use: a worker process or a CLI command loads only the planes it
# touches (`import seq` alone costs a few milliseconds, not the whole engine and report).
_EXPORTS = {
    "__version__": "seq._version",
    "Adapter": "seq.authoring.adapter",
    "adapter": "seq.authoring.adapter",
    "Benchmark": "seq.authoring.benchmark",
    "Step": "seq.authoring.benchmark",
    "benchmark": "seq.authoring.benchmark",
    "Condition": "seq.authoring.conditions",
    "Range": "seq.authoring.params",
    "conditions": "seq.authoring.conditions",
    "Image": "seq.authoring.declarations",
    "Record": "seq.authoring.declarations",
    "Secret": "seq.authoring.declarations",
    "Volume": "seq.authoring.declarations",
    "begin": "seq.authoring.hooks",
    "check": "seq.authoring.hooks",
    "infer": "seq.authoring.hooks",
    "load": "seq.authoring.hooks",
    "reset": "seq.authoring.hooks",
    "score": "seq.authoring.hooks",
    "setup": "seq.authoring.hooks",
    "Policy": "seq.authoring.policy",
    "policy": "seq.authoring.policy",
    "Arm": "seq.engine.arms",
    "EvalCanceled": "seq.errors",
    "SeqInputError": "seq.errors",
    "evaluate": "seq.eval",
    "assets_path": "seq.isolation.assets",
    "EpisodeResult": "seq.record.episode",
    "check_record": "seq.record.integrity",
    "Store": "seq.record.store",
    "adapter_source": "seq.registry.adapters",
    "adapters": "seq.registry.adapters",
    "check_adapter": "seq.registry.adapters",
    "remove_adapter": "seq.registry.adapters",
    "show_adapter": "seq.registry.adapters",
    "benchmark_evals": "seq.eval",
    "benchmarks": "seq.registry.benchmarks",
    "compare_benchmarks": "seq.eval",
    "remove_benchmark": "seq.registry.benchmarks",
    "deploy": "seq.deployment",  # registers (seq.registry.deploy), then checks each benchmark
    "policies": "seq.registry.policies",
    "Report": "seq.report.eval_report",
    # composite policies and policy resources
    "plan": "seq.authoring.hooks",
    "Chat": "seq.isolation.models",
    # scheduled evals and trends (seq.scheduling)
    "install_scheduler": "seq.scheduling",
    "run_due": "seq.scheduling",
    "run_scheduler": "seq.scheduling",
    "schedule": "seq.scheduling",
    "schedules": "seq.scheduling",
    "trend": "seq.scheduling",
}
_SUBMODULES = ["eval", "image", "secret", "stats", "tf", "volume"]
_SUBMODULES += ["console"]  # seq.console.serve: the web console (the `console` extra)
_SUBMODULES += ["port"]  # the port tools: seq.port.export_benchmark / check_model / compare_replay

if TYPE_CHECKING:
    from seq import console, eval, image, port, secret, stats, tf, volume
    from seq._version import __version__
    from seq.authoring.adapter import Adapter, adapter
    from seq.authoring.benchmark import Benchmark, Step, benchmark
    from seq.authoring.conditions import Condition, conditions
    from seq.authoring.declarations import Image, Record, Secret, Volume
    from seq.authoring.hooks import begin, check, infer, load, plan, reset, score, setup
    from seq.authoring.params import Range
    from seq.authoring.policy import Policy, policy
    from seq.deployment import deploy
    from seq.engine.arms import Arm
    from seq.errors import EvalCanceled, SeqInputError
    from seq.eval import benchmark_evals, compare_benchmarks, evaluate
    from seq.isolation.assets import assets_path
    from seq.isolation.models import Chat
    from seq.record.episode import EpisodeResult
    from seq.record.integrity import check_record
    from seq.record.store import Store
    from seq.registry.adapters import adapter_source, adapters, check_adapter, remove_adapter, show_adapter
    from seq.registry.benchmarks import benchmarks, remove_benchmark
    from seq.registry.policies import policies
    from seq.report.eval_report import Report
    from seq.scheduling import install_scheduler, run_due, run_scheduler, schedule, schedules
    from seq.scheduling.trend import trend


# Eval logs and the check at deploy: `seq.eval.logs` is in `seq.eval`.
_EXPORTS.update({"benchmark_logs": "seq.deployment", "CheckFailed": "seq.deployment"})
if TYPE_CHECKING:
    from seq.deployment import CheckFailed, benchmark_logs


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, _SUBMODULES)  # both grow below, in place


def serve(policy: Any, **options: Any) -> Any:
    """Serve a policy behind a batching websocket server; the serving plane is imported on first use.

    Args:
        policy: a name, `NAME@vN`, a built-in, a `@seq.policy` class or an instance.
        **options: those of `seq.serving.serve` (`host`, `port`, `max_batch_size`, `max_wait_ms`,
            `replicas`, `params`, `token`, ...).

    Returns:
        The server's handle (`.url`, `.close()`, a context manager).

    >>> with seq.serve("my-policy", port=8000, max_batch_size=8) as server:
    ...     seq.eval.run(benchmark="metaworld", policy_url=server.url, envs=8)
    """
    from seq.serving import serve as serve_policy

    return serve_policy(policy, **options)


__all__ = [
    "Adapter",
    "Arm",
    "Benchmark",
    "Chat",
    "CheckFailed",
    "Condition",
    "EpisodeResult",
    "EvalCanceled",
    "Image",
    "Policy",
    "Range",
    "Record",
    "Report",
    "Secret",
    "SeqInputError",
    "Step",
    "Store",
    "Volume",
    "__version__",
    "adapter",
    "adapter_source",
    "adapters",
    "assets_path",
    "begin",
    "benchmark",
    "benchmark_evals",
    "benchmark_logs",
    "benchmarks",
    "compare_benchmarks",
    "console",
    "check",
    "check_adapter",
    "check_record",
    "conditions",
    "deploy",
    "eval",
    "evaluate",
    "image",
    "infer",
    "install_scheduler",
    "load",
    "plan",
    "policies",
    "policy",
    "port",
    "remove_adapter",
    "remove_benchmark",
    "reset",
    "run_due",
    "run_scheduler",
    "schedule",
    "schedules",
    "score",
    "secret",
    "serve",
    "setup",
    "show_adapter",
    "stats",
    "tf",
    "trend",
    "volume",
]

# -- seq grid: ablation grids and gates on top of seq.eval ----------------------------------------
_SUBMODULES += ["grid"]
if TYPE_CHECKING:
    from seq import grid
__all__ += ["grid"]

