"""A file an option names that cannot be written is refused in one sentence, before anything runs."""

from __future__ import annotations

from conftest import refused_in_one_line, run_cli

import seq


def test_a_report_file_that_is_a_folder_or_under_a_file_is_refused(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1, seeds=[0])
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    refused_in_one_line(
        run_cli("eval", "report", report.eval_id, "--html", str(tmp_path)), "--html", "that is a folder"
    )
    refused_in_one_line(
        run_cli("eval", "report", report.eval_id, "--markdown", str(a_file / "r.md")),
        "--markdown",
        "is a file, not a folder",
    )
    refused_in_one_line(
        run_cli("eval", "compare", report.eval_id, report.eval_id, "--html", str(tmp_path)), "--html"
    )


def test_an_eval_whose_report_file_cannot_be_written_is_refused_before_it_runs(toy_file, tmp_path):
    seq.deploy(toy_file)
    refused_in_one_line(
        run_cli("eval", "run", "line-controller", "-b", "line", "--csv", str(tmp_path)), "--csv", "folder"
    )
    assert seq.eval.ls() == []


def test_an_export_folder_that_is_a_file_is_refused(toy_file, tmp_path):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=1, seeds=[0])
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("mine")
    for export_format in ("seq", "vla-eval"):
        refused_in_one_line(
            run_cli("eval", "export", report.eval_id, "-o", str(a_file), "--format", export_format),
            f"--output {a_file}: cannot make a folder there",
        )
    assert a_file.read_text() == "mine"
