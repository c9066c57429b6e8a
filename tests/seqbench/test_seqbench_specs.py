"""Specs and selectors: strict keys, released specs immutable, pairing then stable hash sampling."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
import yaml
from seqbench_helpers import (
    CAUSAL_SPEC,
    FULL_SPEC,
    REPO,
    TINY_SPEC,
    cohort_files,
    one_line_error,
    seqbench_cli,
)

from seq.errors import SeqInputError
from seq.seqbench.pipeline import run
from seq.seqbench.selectors import select
from seq.seqbench.specs import Sample, Selector, load_run_spec
from seq.seqbench.tasks import TaskRow


def _row(row_id: str, variant: str = "base", pair: str | None = None) -> TaskRow:
    return TaskRow(row_id, "binding", "test", "short", variant, pair or row_id, "bind x1 a1 ? x1", "a1", ())


def test_released_specs_match_their_recorded_digests():
    sums = (REPO / "specs" / "runs" / "SHA256SUMS").read_text().split("\n")
    recorded = dict(reversed(line.split()) for line in sums if line.strip())
    for name in ("full_v1.yaml", "causal_v2.yaml"):
        path = REPO / "specs" / "runs" / name
        assert recorded[name] == hashlib.sha256(path.read_bytes()).hexdigest(), (
            f"{name} was edited after release"
        )
        load_run_spec(path)


def test_an_edited_released_spec_is_refused(tmp_path):
    shutil.copy(FULL_SPEC, tmp_path / "full_v1.yaml")
    shutil.copy(FULL_SPEC.parent / "SHA256SUMS", tmp_path / "SHA256SUMS")
    (tmp_path / "full_v1.yaml").write_text(FULL_SPEC.read_text().replace("seeds: [0, 1, 2]", "seeds: [0]"))
    with pytest.raises(SeqInputError, match="changed after release"):
        load_run_spec(tmp_path / "full_v1.yaml")


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda s: s.update(colour="blue"), "unknown key 'colour'"),
        (lambda s: s["selectors"]["train"].update(wher={}), "selectors.train: unknown key 'wher'"),
        (lambda s: s["selectors"]["train"]["where"].update(flavour="x"), "unknown column 'flavour'"),
        (
            lambda s: s["stages"][0]["learn"].update({"from": "later"}),
            "'later' is neither initial nor an earlier",
        ),
        (lambda s: s["stages"][0].update(infer=["nothing"]), "unknown selector 'nothing'"),
        (lambda s: s["properties"]["prediction"].update(metric="vibes"), "metric: expected one of"),
        (lambda s: s["budget"]["learn"].update(wall_s=-1), "budget.learn.wall_s: expected a positive number"),
        (lambda s: s.pop("seeds"), "missing key 'seeds'"),
    ],
)
def test_bad_spec_keys_are_one_sentence_naming_the_key(tmp_path, edit, fragment):
    spec = yaml.safe_load(TINY_SPEC.read_text())
    edit(spec)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = seqbench_cli(
        "run",
        path,
        "--algorithm",
        "random",
        "--tasks",
        cohort_files("full.csv")[0],
        "--output",
        tmp_path / "out",
    )
    line = one_line_error(result)
    assert str(path) in line and fragment in line


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--algorithm", "nope"], "--algorithm nope: no such file (or a reference name"),
        (["--algorithm", "random", "--tasks", "/nonexistent/x.csv"], "/nonexistent/x.csv: does not exist"),
        (["--algorithm", "random"], "needs at least one --tasks"),
    ],
)
def test_bad_run_arguments_are_one_sentence(tmp_path, args, fragment):
    result = seqbench_cli("run", TINY_SPEC, *args, "--output", tmp_path / "out")
    assert fragment in one_line_error(result)


def test_bad_algorithm_yaml_names_the_key(tmp_path):
    path = tmp_path / "algo.yaml"
    path.write_text("command: [python]\nmanifest: m.json\n")
    result = seqbench_cli(
        "run",
        TINY_SPEC,
        "--algorithm",
        path,
        "--tasks",
        cohort_files("full.csv")[0],
        "--output",
        tmp_path / "out",
    )
    assert f"{path}: missing key 'initial_model'" in one_line_error(result)


def test_pairing_keeps_complete_pairs_and_sampling_is_stable():
    rows = [_row(f"b{i}") for i in range(40)] + [_row(f"b{i}:n", "nonce", f"b{i}") for i in range(0, 40, 2)]
    pairs = ({"variant": ("base",)}, {"variant": ("nonce",)})
    selector = Selector("pairs", {}, {}, pairs, Sample(5, None, "pair_id"))
    chosen = select(rows, selector, sampling_seed=7)
    assert chosen.pairs == 5 and chosen.incomplete_pairs == 20 and len(chosen.rows) == 10
    assert all(int(r.pair_id[1:]) % 2 == 0 for r in chosen.rows)  # only complete pairs
    more = rows + [_row(f"c{i}") for i in range(30)]  # unpaired rows added later change nothing
    assert [r.id for r in select(more, selector, 7).rows] == [r.id for r in chosen.rows]
    other = select(rows, selector, sampling_seed=8)
    assert {r.id for r in other.rows} != {r.id for r in chosen.rows}  # the sampling seed is independent


def test_causal_v2_records_the_selected_pairs(tmp_path):
    files = cohort_files("full.csv", "nonce.csv", "nonce-counterfactual.csv")
    result = run(CAUSAL_SPEC, "count-lm", files, tmp_path / "run")
    selection = json.loads((tmp_path / "run" / "selection.json").read_text())
    assert selection["sampling_seed"] == 2024
    nonce = selection["selectors"]["nonce_pairs"]
    ids = set(nonce["ids"])
    assert nonce["pairs"] == len([i for i in ids if i.endswith(":nonce")])
    assert all(i.removesuffix(":nonce") in ids for i in ids)  # every stress row with its control
    props = {p["name"]: p["value"] for p in result.properties}
    assert props["control"] == props["nonce_invariance"] == 1.0  # count-lm reads its context
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["sampling_seed"] == 2024 and manifest["seeds"] == [0, 1, 2]
