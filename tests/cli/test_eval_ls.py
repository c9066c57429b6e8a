"""`seq eval ls` at 80 columns: ids, statuses, counts and dates whole; a name too long for the
"ran" column breaks after a separator, never mid-word (seen: "metaworld-expe" / "rt")."""

from __future__ import annotations

from conftest import run_cli

import seq

LONG = """

@seq.policy(name="line-controller-finetuned-on-everything")
class LongNamed(LineController):
    pass
"""


def test_eval_ls_at_80_columns_breaks_long_names_only_after_a_separator(toy_file):
    toy_file.write_text(toy_file.read_text() + LONG)
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller-finetuned-on-everything", benchmark="line", envs=1, seeds=[0])
    listed = run_cli("eval", "ls", env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines)
    (first,) = [line for line in lines if report.eval_id in line]
    assert "completed" in first and "2/2" in first
    column = first.index("line@v1")
    ran = [line[column:].split("   ")[0].strip() for line in lines[lines.index(first) :]]
    pieces = [piece.removeprefix("+ ") for piece in ran if piece][1:]
    assert "".join(pieces) == "line-controller-finetuned-on-everything@v1"
    assert len(pieces) > 1 and all(piece[-1] in "-_@.=" for piece in pieces[:-1]), pieces
