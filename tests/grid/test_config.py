"""Grid configs: both shapes load, and every bad key is refused in one line naming it and the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import refused_in_one_line, run_cli

import seq
from seq.grid import GridConfig

AXES = """
policies: [metaworld-expert, noisy-expert]
modes:
  clean: {params: {noise: 0.0}}
  noisy: {params: {noise: 1.0}, workers: 1}
families:
  metaworld:
    variations:
      reach: {tasks: [reach-v3]}
      push: {tasks: [push-v3]}
seeds: [0, 1]
max_steps: 50
"""


def _write(tmp_path: Path, text: str, name: str = "grid.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_axes_shape_from_yaml_equals_the_same_python_object(tmp_path: Path) -> None:
    from_yaml = GridConfig.from_yaml(_write(tmp_path, AXES))
    in_python = GridConfig(
        policies=(seq.grid.PolicyEntry("metaworld-expert", "metaworld-expert"),
                  seq.grid.PolicyEntry("noisy-expert", "noisy-expert")),
        modes=(seq.grid.Mode("clean", {"noise": 0.0}), seq.grid.Mode("noisy", {"noise": 1.0}, workers=1)),
        families=(seq.grid.Family("metaworld", "metaworld", (
            seq.grid.Variation("reach", tasks=("reach-v3",)),
            seq.grid.Variation("push", tasks=("push-v3",)))),),
        seeds=(0, 1),
        max_steps=50,
        output_dir=str(tmp_path / "grid_runs"),
        source=str(tmp_path / "grid.yaml"),
    )  # fmt: skip
    assert from_yaml == in_python
    assert from_yaml.shape == "grid"


def test_cells_of_one_variation_share_one_eval_and_identical_arms_share_one_arm(tmp_path: Path) -> None:
    from seq.grid.cells import expand, group

    config = GridConfig.from_yaml(_write(tmp_path, AXES.replace(", workers: 1", "")))
    cells = expand(config)
    assert len(cells) == 8
    groups = group(cells)
    assert [len(g.cells) for g in groups] == [4, 4]
    # metaworld-expert declares no `noise`: both modes run it the same way, as one arm
    assert [arm.name for arm in groups[0].arms] == [
        "clean+noisy@metaworld-expert",
        "clean@noisy-expert",
        "noisy@noisy-expert",
    ]
    noisy = next(arm for arm in groups[0].arms if arm.name == "noisy@noisy-expert")
    assert noisy.params == {"noise": 1.0}
    assert len(group(expand(config, modes=["clean"]))[0].cells) == 2


def test_the_suites_shape_lists_cells(tmp_path: Path) -> None:
    config = GridConfig.from_yaml(_write(tmp_path, """
suites:
  - {name: reach-clean, benchmark: metaworld, policy: noisy-expert, params: {noise: 0.0}, tasks: [reach-v3]}
  - {name: reach-noisy, benchmark: metaworld, policy: noisy-expert, params: {noise: 1.0}, tasks: [reach-v3]}
gate_threshold: 0.8
"""))  # fmt: skip
    assert config.shape == "suites" and [s.name for s in config.suites] == ["reach-clean", "reach-noisy"]
    assert config.gate_threshold == 0.8
    from seq.grid.cells import expand

    both = GridConfig.from_dict({"suites": [{"name": "a", "benchmark": "metaworld", "policy": "x"}],
                                 "tasks": ["push-v3"]})  # fmt: skip
    assert expand(both)[0].tasks == ("push-v3",)  # the grid's tasks, where a cell names none


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (AXES + "colour: red\n", ["unknown key 'colour'"]),
        (AXES.replace("{params: {noise: 0.0}}", "{parms: {noise: 0.0}}"), ["modes.clean.parms", "params"]),
        (AXES.replace("reach: {tasks", "reach: {task"), ["families.metaworld.variations.reach.task"]),
        ("seeds: [0]\npolicies: [metaworld-expert]\n", ["neither", "'families'", "'suites'"]),
        (AXES + "suites: []\n", ["both"]),
        ("base: other.yaml\n" + AXES, ["'base'", "standalone"]),
        (AXES.replace("noise: 1.0", "noize: 1.0"), ["modes.noisy.params.noize", "declares"]),
        (AXES.replace("max_steps: 50", "max_steps: many"), ["'max_steps'", "integer"]),
        (AXES + "gate_threshold: 1.5\n", ["'gate_threshold'", "[0, 1]"]),
        (
            "policies: [{id: x, url: 'http://host'}]\nfamilies: {metaworld: {}}\n",
            ["policies[0].url", "ws://"],
        ),
        ("families: {metaworld: {}}\n", ["'policies'", "at least one"]),
        ("- a\n- b\n", ["a mapping"]),
        ("families: {metaworld: {}\npolicies: [", ["not valid YAML"]),
    ],
)
def test_a_bad_config_is_refused_naming_its_key_and_file(tmp_path: Path, text: str, fragments: list) -> None:
    path = _write(tmp_path, text, "bad_grid.yaml")
    refused_in_one_line(run_cli("grid", "run", str(path)), "bad_grid.yaml", *fragments)
    assert not (tmp_path / "grid_runs").exists()  # refused before any run directory is made


def test_families_or_modes_on_a_suites_config_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "suites:\n  - {name: a, benchmark: metaworld, policy: metaworld-expert}\n")
    refused_in_one_line(run_cli("grid", "run", str(path), "--modes", "clean"), "--modes", "suites config")
    refused_in_one_line(run_cli("grid", "run", str(path), "--families", "x"), "--families", "suites config")


def test_an_unknown_filter_or_gate_option_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, AXES)
    refused_in_one_line(run_cli("grid", "run", str(path), "--modes", "loud"), "--modes loud", "clean, noisy")
    refused_in_one_line(run_cli("grid", "run", str(path), "--gate-on", "mean"), "--gate-on mean")
    refused_in_one_line(
        run_cli("grid", "run", str(tmp_path / "nope.yaml")), "nope.yaml", "no such grid config"
    )


def test_a_cell_the_engine_refuses_is_refused_before_any_cell_runs(tmp_path: Path) -> None:
    path = _write(tmp_path, AXES.replace("push-v3", "push-v9"))
    refused_in_one_line(run_cli("grid", "run", str(path)), "grid.yaml", "push-v9", "no such task")


def test_the_examples_are_a_valid_grid_and_a_workflow_that_gates_it() -> None:
    import yaml

    from seq.grid.cells import expand, group

    root = Path(__file__).resolve().parents[2]
    config = GridConfig.from_yaml(root / "examples" / "grid_metaworld.yaml")
    cells = expand(config)
    assert len(cells) == 8 and len(group(cells)) == 2
    workflow = yaml.safe_load((root / "examples" / "ci" / "grid.yml").read_text())
    steps = [step.get("run", "") for step in workflow["jobs"]["grid"]["steps"]]
    assert any(line.startswith("seq grid run examples/grid_metaworld.yaml --gate") for line in steps)
