"""Porting a classic-MuJoCo benchmark to MuJoCo Warp: moving a CPU benchmark to the GPU.

On top of the planes: it loads benchmarks as the registry does and calls their hooks as the
engine does. `export` runs where the benchmark runs (its image, or this Python); `check-model`
and `compare --replay` run in the port environment (`seq.port.environment`). See docs/port.md.
"""

from seq.port.api import check_model, compare_replay, export_benchmark

__all__ = ["check_model", "compare_replay", "export_benchmark"]
