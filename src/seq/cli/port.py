"""`seq benchmark export / check-model` and the lines of `seq benchmark compare --replay`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    """Add the port commands to the `seq benchmark` group."""
    app.command("export")(export_command)
    app.command("check-model")(check_model_command)
    app.command("scaffold")(scaffold_command)
    app.command("convert")(convert_command)


# `--tasks a,b` and `--seeds 0-9` as `seq eval run` takes them, the output folder as `-o/--output`
# (`seq eval export`'s); the old spellings `--task` and `--out` still work, unlisted.
TASKS = typer.Option(None, "--tasks", metavar="NAME", help="Only these tasks (comma-separated or repeated).")
SEEDS = typer.Option(
    None, "--seeds", metavar="SEEDS", help="Seeds, such as 0,1,2 or 0-9 [default: the benchmark's]."
)
OLD_TASK = typer.Option(None, "--task", hidden=True)
OLD_OUT = typer.Option(None, "--out", hidden=True)


def _tasks(tasks: list[str] | None, old: list[str] | None) -> list[str] | None:
    from seq.cli.options import split_list

    return split_list([*(tasks or []), *(old or [])], "--tasks")


def _output(output: Path | None, old: Path | None) -> Path | None:
    from seq.cli.options import either_spelling

    return either_spelling(output, old, "--output", "--out")


def export_command(
    target: str = typer.Argument(..., help="FILE[:Class], or a benchmark's name."),
    output: Path = typer.Option(
        None, "-o", "--output", metavar="DIR", help="The folder to write the scene into [default: scene]."
    ),
    seeds: list[str] = SEEDS,
    tasks: list[str] = TASKS,
    suite: str = typer.Option(None, "--suite", metavar="NAME", help="The suite [default: its first]."),
    steps: int = typer.Option(200, "--steps", metavar="N", help="Steps of the reference run of each start."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest as JSON."),
    old_task: list[str] = OLD_TASK,
    old_out: Path = OLD_OUT,
) -> None:
    """Each task's scene and starts, through the benchmark's own reset (where it runs)."""
    from seq.cli.options import parse_seeds
    from seq.port import export_benchmark

    out = _output(output, old_out) or Path("scene")
    chosen, seed_list = _tasks(tasks, old_task), parse_seeds(seeds)
    manifest = port_step(
        lambda: export_benchmark(target, out, seeds=seed_list, tasks=chosen, suite=suite, steps=steps)
    )
    if as_json:
        print(json.dumps(manifest, indent=2))
        return
    console = Console(highlight=False, soft_wrap=True)
    if manifest.get("engine") == "sapien":
        print_sapien_export(manifest, out, console)
        return
    console.print(
        f"exported {len(manifest['starts'])} start(s) of {manifest['benchmark']} on MuJoCo "
        f"{manifest['mujoco']} into {out}: {len(manifest['scenes'])} scene(s)"
    )
    for scene in manifest["scenes"]:
        console.print(f"  {scene['id']}: {', '.join(scene['tasks'])}")
    for task, varies in manifest["varies"].items():
        changed = varies["joints"] + varies["mocap"] + varies["objects"]
        console.print(f"  {task}: seeds change {', '.join(changed) or 'nothing'}")
    busiest = max((start["contacts"] for start in manifest["starts"]), default=0)
    console.print(f"  contacts at a start: at most {busiest}")


def print_sapien_export(manifest: dict[str, Any], out: Path, console: Console) -> None:
    console.print(
        f"exported {len(manifest['starts'])} start(s) of {manifest['benchmark']} on SAPIEN "
        f"{manifest['sapien']} into {out}: {len(manifest['scenes'])} build(s) (bodies, shapes, "
        "materials, masses, joints)"
    )
    for scene in manifest["scenes"]:
        starts = [s for s in manifest["starts"] if s["scene"] == scene["id"]]
        console.print(f"  {scene['id']}: {', '.join(scene['tasks'])} ({len(starts)} start(s))")
    busiest = max((start["contacts"] for start in manifest["starts"]), default=0)
    console.print(f"  contacts at a start: at most {busiest}")


def check_model_command(
    scene: Path = typer.Argument(..., help="A folder written by `seq benchmark export`."),
    as_json: bool = typer.Option(False, "--json", help="Print the check as JSON."),
) -> None:
    """What MuJoCo Warp's MuJoCo would compile differently; exit 1 when the physics would change."""
    from seq.port import check_model

    result = port_step(lambda: check_model(scene))
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_check(result, Console(highlight=False, soft_wrap=True))
    raise typer.Exit(1 if result["physics_changes"] else 0)


def scaffold_command(
    scene: Path = typer.Argument(..., help="A folder written by `seq benchmark export`."),
    envs: int = typer.Option(64, "--envs", metavar="N", help="Warp worlds stepped at once."),
    output: Path = typer.Option(
        None, "-o", "--output", metavar="DIR", help="The folder to write [default: NAME/]."
    ),
    name: str = typer.Option(
        None, "--name", metavar="NAME", help="The new benchmark's name [default: BENCHMARK-warp]."
    ),
    old_out: Path = OLD_OUT,
) -> None:
    """A batched MuJoCo Warp benchmark from an export, with TODOs (controller, observation, success)."""
    from seq.port.scaffold import scaffold

    out = _output(output, old_out)
    print_scaffold(scaffold(scene, envs, out, name), Console(highlight=False, soft_wrap=True))


def convert_command(
    target: str = typer.Argument(..., help="FILE[:Class], or a benchmark's name."),
    envs: int = typer.Option(64, "--envs", metavar="N", help="Warp worlds stepped at once."),
    seeds: list[str] = SEEDS,
    tasks: list[str] = TASKS,
    output: Path = typer.Option(
        None, "-o", "--output", metavar="DIR", help="The folder to write [default: NAME/]."
    ),
    name: str = typer.Option(
        None, "--name", metavar="NAME", help="The new benchmark's name [default: BENCHMARK-warp]."
    ),
    old_task: list[str] = OLD_TASK,
    old_out: Path = OLD_OUT,
) -> None:
    """export, check-model and scaffold in one go."""
    import tempfile

    from seq.cli.options import parse_seeds
    from seq.port import check_model, export_benchmark
    from seq.port.scaffold import scaffold

    out = _output(output, old_out)
    chosen, seed_list = _tasks(tasks, old_task), parse_seeds(seeds)
    console = Console(highlight=False, soft_wrap=True)
    with tempfile.TemporaryDirectory(prefix="seq-convert-") as scratch:
        scene = Path(scratch) / "scene"
        manifest = port_step(lambda: export_benchmark(target, scene, seeds=seed_list, tasks=chosen))
        console.print(f"exported {len(manifest['starts'])} start(s) of {manifest['benchmark']}")
        result = port_step(lambda: check_model(scene))
        print_check(result, console)
        print_scaffold(scaffold(scene, envs, out, name, check=result), console)


def print_scaffold(written: dict[str, Any], console: Console) -> None:
    console.print(f"wrote {written['out']}/benchmark.py ({written['name']}, {written['envs']} worlds) "
                  "and its README; TODO: the controller, the observation, the success check")
    if written["volume"]:
        console.print(f"the scene ({written['scene_bytes'] / 1e6:.1f} MB) goes in volume "
                      f"{written['volume']}: see {written['out']}/README.md")


def port_step(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a port command; a worker that crashed (its traceback already printed) exits 1."""
    from seq.port.environment import PortRunError

    try:
        return run()
    except PortRunError as error:
        Console(stderr=True, highlight=False, soft_wrap=True).print(str(error))
        raise typer.Exit(1) from None


def print_check(result: dict[str, Any], console: Console) -> None:
    if result.get("engine") == "sapien":
        print_sapien_check(result, console)
        return
    console.print(f"{result['scene']}: exported on MuJoCo {result['exported_with']}, "
                  f"checked on MuJoCo {result['mujoco']} (MuJoCo Warp's)")
    for scene in result["scenes"]:
        console.print(f"scene {scene['id']} ({', '.join(scene['tasks'])}):")
        for field in (f for f in scene["fields"] if f["physics"]):
            console.print(f"  {field['kind']} {field['name']}: {field['field']} "
                          f"{_short(field['exported'])} -> {_short(field['port'])}")
        cosmetic = sorted({f"{f['kind']} {f['name']}" for f in scene["fields"] if not f["physics"]})
        if cosmetic:
            shown = ", ".join(cosmetic[:3]) + (f" and {len(cosmetic) - 3} more" if len(cosmetic) > 3 else "")
            console.print(f"  cosmetic only (no collision, no mass; --json lists them): {shown}")
        for option in scene["options"]:
            console.print(f"  option {option['option']}: compiles to {_short(option['port'])}, "
                          f"was {_short(option['exported'])} (pin it)")
        changed_options = {option["option"] for option in scene["options"]}
        for default in scene["defaults"]:
            pinned = "" if default["option"] in changed_options else "; the scene sets its own"
            console.print(f"  default {default['option']} changed: {_short(default['exported'])} "
                          f"-> {_short(default['port'])}{pinned}")
        if scene["unsupported"]:
            console.print(f"  MuJoCo Warp does not support: {scene['unsupported']}")
        verdict = "changes the physics" if scene["physics_changes"] else "clean"
        console.print(f"  {verdict}")


def print_sapien_check(result: dict[str, Any], console: Console) -> None:
    console.print(f"{result['scene']}: {result['starts']} start(s) exported on SAPIEN "
                  f"{result['exported_with']}, checked for SAPIEN's GPU PhysX")
    for scene in result["scenes"]:
        console.print(f"build {scene['id']} ({', '.join(scene['tasks'])}): {scene['bodies']} bodies, "
                      f"{scene['articulations']} articulation(s)")
        for body in scene["dynamic_triangle_meshes"]:
            console.print(f"  body {body}: a triangle mesh on a moving body, which the GPU PhysX refuses")
            console.print("    (make it convex, or split it into convex parts)")
    for task, systems in result["gpu_systems"].items():
        console.print(f"{task}: {systems} GPU system(s) (one per build its starts use)")
    for call in result["no_gpu_calls"]:
        console.print(f"{call['call']}: {call['reset']} call(s) in reset, {call['run']} in stepping, "
                      f"{call['starts']} start(s) of {', '.join(call['tasks'])}")
        console.print(f"  {call['why']}")
    if not result["no_gpu_calls"]:
        console.print("no call without a GPU form was made")
    console.print("needs changes for the GPU PhysX" if result["physics_changes"] else "clean")


def print_replay(result: dict[str, Any], console: Console) -> None:
    if result.get("engine") == "sapien":
        print_sapien_replay(result, console)
        return
    atol, steps = result["atol"], result["steps"]
    console.print(f"replay of {result['scene']} over {steps} steps, atol {atol}: classic MuJoCo "
                  f"{result['mujoco']} against MuJoCo Warp"
                  + ("" if result["port_scene"] == result["scene"] else f" on {result['port_scene']}"))
    for start in result["starts"]:
        head = f"{start['task']} seed {start['seed']}:"
        if start["port"] is None:
            console.print(f"{head} agrees (largest gap {start['max_port']:.2g})")
        elif start["sensitive"]:
            console.print(f"{head} Warp parts {_gap(start['port'])}, where the two MuJoCo versions "
                          "part too: sensitive there, not the port's")
        else:
            console.print(f"{head} the port differs {_gap(start['port'])}")
        if start["version"] is not None:
            shared = start["warp_vs_reference"] is not None and start["port"] is None
            whose = "shared by MuJoCo Warp: the MuJoCo version's, not the port's" if shared else ""
            console.print(f"  MuJoCo {result['exported_with']} (the export) and {result['mujoco']} "
                          f"differ {_gap(start['version'])}" + (f"; {whose}" if whose else ""))
    for scene_id, changes in result.get("port_scene_changes", {}).items():
        for change in changes:
            console.print(f"  the port's scene {scene_id} differs: {change}")
    verdict = "the port changes the motion" if result["port_differs"] else "the port agrees"
    console.print(verdict)


def print_sapien_replay(result: dict[str, Any], console: Console) -> None:
    console.print(f"replay of {result['scene']} over {result['steps']} steps, atol {result['atol']}: "
                  f"SAPIEN's {result['backend'].upper()} PhysX against the export's CPU PhysX run")
    for start in result["starts"]:
        head = f"{start['task']} seed {start['seed']}:"
        apart = start["apart"]
        if apart is None:
            console.print(f"{head} agrees (largest gap {start['largest']:.2g}, {start['furthest']})")
        else:
            console.print(f"{head} apart from step {apart['step']}: {apart['object']} by {apart['gap']:.2g}; "
                          f"largest {start['largest']:.2g} ({start['furthest']})")
    console.print("the port changes the motion" if result["port_differs"] else "the port agrees")


def _gap(gap: dict[str, Any]) -> str:
    return (f"from step {gap['step']}: joint {gap['joint']} (of {gap['joint_body']}) by "
            f"{gap['joint_gap']:.2g}, body {gap['body']} by {gap['body_gap']:.2g} m")


def _short(value: Any) -> str:
    if isinstance(value, list):
        flat = value if len(value) <= 4 else value[:4] + ["..."]
        return "[" + " ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in flat) + "]"
    return str(value)
