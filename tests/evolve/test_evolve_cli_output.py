"""What `seq evolve` tells a user on the command line: counts with their totals, why a cycle
promoted nothing, eval ids by unique prefix in `diff`, and an export that says what it wrote.
Built on the toy benchmark of `test_loop_toy` (a few seconds)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli
from test_loop_toy import LINE


def _evolve(home, *args: str):
    env = {"SEQ_HOME": str(home)}
    path = home / "walk.py"
    path.write_text(LINE)
    assert run_cli("deploy", str(path), env=env).returncode == 0
    done = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "walk-steady",
                   "--reference-trials", "1", "--envs", "1", *args, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return env, done.stdout


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    """Two cycles, 6 trials: cycle 1 promotes, and some candidates are rejected."""
    home = tmp_path_factory.mktemp("evolve-cli")
    env, out = _evolve(home, "--trials", "6", "--cycles", "2")
    return env, home, out


def test_the_run_counts_failures_of_a_total_in_plain_words(evolved):
    _, _, out = evolved
    diagnosed = re.findall(r"diagnose: (\d+) of (\d+) episodes failed; (\d+) clusters?\b", out)
    assert len(diagnosed) == 2 and all(int(f) <= int(n) for f, n, _ in diagnosed)
    # no Python list in what a person reads (an interval's brackets hold signed numbers)
    assert "1 clusters" not in out and not re.search(r"\[(?![+-]\d)", out)
    assert re.search(r"generate: \d+ candidates? \(horizon\)", out)
    # before the candidates' evals, how many episodes they take: the target 12 trials of each
    # candidate and seed condition (6–11 read; 0–5 repeat the cycle's eval), the reference 1 each
    validated = re.findall(
        r"validate: (\d+) target episodes \(read: trials 6–11\) and (\d+) reference …", out
    )
    assert validated and all(int(t) % 12 == 0 and int(t) // 12 > int(r) for t, r in validated)
    assert re.search(
        r"decide: \d+ promoted, \d+ to review, \d+ rejected \(one-sided exact test, α 0.05\)", out
    )
    # the promoted candidates' drops, re-estimated on trials that neither chose nor judged them
    assert re.search(r"estimate: \d+ target episodes \(read: trials 12–17\) …\n    y1c\d+ \w+: drop ", out)
    assert "evolved: walk@v1 → walk@v2" in out
    status = run_cli("evolve", "status", env=evolved[0]).stdout
    assert status.startswith("walk: 2 cycles, latest walk@v2\n")
    assert re.search(r"promote: (1 condition|[2-9] conditions) → walk@v2", out)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_run_that_promotes_nothing_says_so(tmp_path):
    env, out = _evolve(tmp_path, "--trials", "2", "--seeds", "0-1")  # too few failures to cluster
    assert "nothing promoted: walk@v1 stays the latest version." in out
    assert re.search(r"diagnose: \d of 8 episodes failed", out)  # 2 tasks × seeds 0-1 × 2 trials
    assert "evolved: walk@v1 → walk@v1" not in out
    report = run_cli("evolve", "report", env=env)
    assert "No candidates: no failure cluster" in report.stdout
    assert "| operator | promote |" not in report.stdout  # no empty table
    assert "No failure cluster." in report.stdout and "| cluster | type |" not in report.stdout
    html = tmp_path / "r.html"
    assert run_cli("evolve", "report", "--html", str(html), env=env).returncode == 0
    assert "No candidates: no failure cluster" in html.read_text()


def test_the_report_says_failures_of_how_many_and_why_candidates_were_rejected(evolved):
    env, home, _ = evolved
    state = json.loads((home / "evolve" / "walk.json").read_text())
    first = state["cycles"][0]
    rejected = [c for c in first["candidates"] if c["decision"] == "reject"]
    assert rejected  # the fixture's premise
    gates = {reason.partition(":")[0] for c in rejected for reason in c["reasons"]}
    md = run_cli("evolve", "report", env=env).stdout
    assert f"{first['failed_episodes']} of {first['episodes']} episodes failed." in md
    # cycle 1's eval has no evolved slice (what it promotes is evaluated by cycle 2): said once
    assert md.count("No evolved slice in this cycle's eval") == 1
    # a pure-Python env has no contacts: the report says which detectors could not look, and why
    judged = next(line for line in md.splitlines() if line.startswith("Not judged: "))
    assert "distractor_interaction — the trace has no contacts" in judged
    line = next(line for line in md.splitlines() if line.startswith("Rejected by: "))
    assert {part.split(" ×")[0] for part in line[len("Rejected by: ") : -1].split(", ")} == gates
    # a promoted candidate's gate (p on 6 fresh pairs), its drop re-estimated with its pairs (6)
    # and the reference's rate with its n (1)
    lines = md.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("| candidate | task | change |")))
    promoted = [row for row in lines[start + 2 :] if row.startswith("| y1c")]
    shown = r"\| p [0-9.e-]+ \(n 6\) \| \d+% → \d+% \| [+-]\d\.\d\d \[.*\] \(n 6\) \| 100% \(n 1\) \|$"
    assert promoted and all(re.search(shown, row) for row in promoted)
    assert "one-sided exact McNemar p ≤ 0.05" in md and "re-estimated on trials 12–17" in md
    # every candidate, promoted or not, with its drop on the fresh trials (6 pairs) and decision
    judged = [row for row in lines[:start] if row.startswith("| y1c")]
    fresh = r"\| [+-]\d\.\d\d \(\d+% → \d+%, n 6: \d seed-only, \d candidate-only, p [0-9.e-]+\) \|"
    assert len(judged) == len(first["candidates"]) and all(re.search(fresh, row) for row in judged)
    assert {row.rstrip(" |").rsplit("| ", 1)[-1] for row in judged} <= {"promote", "review", "reject"}
    html = home / "r.html"
    assert run_cli("evolve", "report", "--html", str(html), env=env).returncode == 0
    assert line in html.read_text() and "100% (n 1)" in html.read_text()


def test_the_json_report_holds_the_fresh_evidence_the_markdown_shows(evolved):
    env, home, _ = evolved
    shown = run_cli("evolve", "report", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    promoted = json.loads(shown.stdout)["cycles"][0]["promoted"]
    md = run_cli("evolve", "report", env=env).stdout
    assert promoted and all(row["fresh"] and row["trials"] == [12, 18] for row in promoted)
    for row in promoted:
        line = next(line for line in md.splitlines() if line.startswith(f"| {row['id']} |"))
        assert f"{row['drop']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}] (n {row['pairs']})" in line
        assert row["gate_p"] <= row["alpha"] == 0.05 and row["gate_test"] == "exact McNemar, one-sided"


def test_diff_takes_unique_prefixes_and_says_when_there_is_nothing_to_compare(evolved):
    env, home, _ = evolved
    state = json.loads((home / "evolve" / "walk.json").read_text())
    base, evolved_slice = state["cycles"][1]["eval_ids"]  # cycle 2: v2's base and evolved suites
    shown = run_cli("evolve", "diff", evolved_slice[:7], evolved_slice.removeprefix("ev-")[:6], env=env)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^\w+: \d\.\d\d → \d\.\d\d \(B − A [+-]\d\.\d\d \[.*\] 95%, n \d+ pairs\)$",
                     shown.stdout, re.M)  # fmt: skip
    empty = run_cli("evolve", "diff", base[:8], base[:8], env=env)
    assert empty.returncode == 0 and empty.stdout.startswith("nothing to compare")
    missing = run_cli("evolve", "diff", base, "ev-nope", env=env)
    assert missing.returncode == 2 and "no eval 'ev-nope'" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_export_says_how_many_and_drops_a_previous_exports_videos(evolved):
    env, home, _ = evolved
    out = home / "hard"
    done = run_cli("evolve", "export-hard-cases", "-o", str(out), env=env)
    target = out / "walk-hard-cases.jsonl"
    lines = target.read_text().splitlines()
    assert done.stdout.strip() == f"wrote {len(lines)} hard cases to {target}"
    dataset = home / "lerobot"
    stale = dataset / "videos" / "observation.images.top" / "chunk-000" / "file-000.mp4"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an earlier export's video")
    (dataset / "meta").mkdir()
    (dataset / "meta" / "info.json").write_text("{}")
    done = run_cli("evolve", "export-hard-cases", "-o", str(dataset), "--format", "lerobot", "--no-videos",
                   "--max-episodes", "1", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"wrote 1 hard case to {dataset}"
    info = json.loads((dataset / "meta" / "info.json").read_text())
    assert info["video_path"] is None and not (dataset / "videos").exists()


def test_a_bad_reference_is_refused_before_any_episode_runs(tmp_path):
    env = {"SEQ_HOME": str(tmp_path)}
    path = tmp_path / "walk.py"
    path.write_text(LINE)
    assert run_cli("deploy", str(path), env=env).returncode == 0
    # 2 trials: no cluster, no candidate, so the reference would never have run to fail
    bad = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "nope",
                  "--trials", "2", "--envs", "1", env=env)  # fmt: skip
    assert bad.returncode == 2 and "unknown policy 'nope'" in bad.stderr
    assert "cycle 1" not in bad.stdout and not (tmp_path / "evolve").exists()
    zero = run_cli("evolve", "run", "walk", "--policy", "walk-wobbly", "--reference", "walk-steady",
                   "--max-candidates", "0", env=env)  # fmt: skip
    assert zero.returncode == 2 and "--max-candidates" in zero.stderr


def test_a_fresh_home_says_nothing_has_evolved_yet(tmp_path):
    env = {"SEQ_HOME": str(tmp_path)}
    status = run_cli("evolve", "status", env=env)
    assert status.returncode == 0 and status.stdout.startswith("no benchmark has evolved here yet")
    report = run_cli("evolve", "report", env=env)
    assert report.returncode == 2 and "no benchmark has evolved here yet" in report.stderr
    assert "--benchmark" not in report.stderr  # naming one would not help


def test_prune_refuses_a_negative_keep_and_deletes_nothing(tmp_path):
    env, _ = _evolve(tmp_path, "--trials", "2")
    traces = sorted(tmp_path.rglob("*.trace"))
    assert traces  # the premise: the cycle kept its traces
    refused = run_cli("evolve", "prune", "--keep-cycles", "-1", env=env)
    assert refused.returncode == 2 and "--keep-cycles -1" in refused.stderr
    assert sorted(tmp_path.rglob("*.trace")) == traces


def test_an_older_version_than_the_log_reached_is_refused_not_ignored(evolved):
    env, home, _ = evolved
    before = (home / "evolve" / "walk.json").read_text()
    old = run_cli("evolve", "run", "walk@v1", "--policy", "walk-wobbly", "--reference", "walk-steady",
                  env=env)  # fmt: skip
    assert old.returncode == 2 and "walk@v1: 2 evolve cycles have led to walk@v2" in old.stderr
    assert "cycle 3" not in old.stdout and (home / "evolve" / "walk.json").read_text() == before


def test_paths_that_cannot_be_written_are_one_sentence(evolved, tmp_path):
    env, _, _ = evolved
    folder = run_cli("evolve", "report", "--html", str(tmp_path), env=env)
    assert folder.returncode == 2 and "that is a folder" in folder.stderr
    afile = tmp_path / "taken.txt"
    afile.write_text("")
    taken = run_cli("evolve", "export-hard-cases", "-o", str(afile), env=env)
    assert taken.returncode == 2 and "expected a directory" in taken.stderr
    assert "Traceback" not in folder.stderr + taken.stderr
    deep = tmp_path / "new" / "report.md"  # a missing folder is made, as --html does
    assert run_cli("evolve", "report", "-o", str(deep), env=env).returncode == 0 and deep.is_file()


def test_the_command_list_reads_whole_at_80_columns():
    for group in (("evolve",), ("evolve", "review")):
        shown = run_cli(*group, "--help", env={"COLUMNS": "80"}).stdout
        commands = shown.split("Commands:")[1].splitlines()[1:]
        assert commands and not [line for line in commands if "..." in line or len(line) > 80]
        assert len([line for line in commands if line.strip()]) == (7 if group == ("evolve",) else 3)
