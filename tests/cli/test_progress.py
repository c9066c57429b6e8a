"""Progress where output is not a terminal: plain lines on stderr, paced by the work done."""

from __future__ import annotations

import io
import re
from pathlib import Path

from conftest import run_cli

import seq
from seq.cli.progress import ProgressLog, duration_text

LINE = re.compile(r"^(ev-[0-9a-f]+): (\d+)/(\d+) \(\d+%\) · success \d\.\d\d \[\d\.\d\d, \d\.\d\d\] · ")


def test_a_piped_eval_prints_progress_lines_before_its_report(toy_file):
    seq.deploy(toy_file)
    done = run_cli("eval", "run", "line-controller", "--benchmark", "line", "--trials", "7", "--envs", "2")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if LINE.match(line)]
    assert len(lines) >= 2, done.stderr
    counts = [int(LINE.match(line).group(2)) for line in lines]
    assert counts == sorted(counts) and counts[-1] == 42 and int(LINE.match(lines[0]).group(3)) == 42
    assert all(len(line) <= 80 for line in lines), lines
    assert "Overall" in done.stdout and "Overall" not in done.stderr


ARMS_LINE = re.compile(r"^ev-[0-9a-f]+: (\d+)/\d+ \(\d+%\) · success A (\d\.\d\d), B (\d\.\d\d) · ")


def test_a_piped_eval_of_two_arms_shows_each_arms_success_not_their_pool(toy_file):
    seq.deploy(toy_file)
    arms = ("--param", "noise=0.0", "--vs", "line-controller", "--vs-param", "noise=0.5")
    done = run_cli(
        "eval", "run", "line-controller", "--benchmark", "line", *arms, "--trials", "4", "--envs", "2"
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if ARMS_LINE.match(line)]
    assert lines and all(len(line) <= 80 for line in lines), done.stderr
    last = ARMS_LINE.match(lines[-1])
    (eval_row,) = seq.eval.ls()
    episodes = seq.eval.report(eval_row["id"]).episodes
    rates = []
    for arm in ("noise=0.0", "noise=0.5"):
        mine = [e.metrics["success"] >= 1.0 for e in episodes if e.arm == arm]
        rates.append(f"{sum(mine) / len(mine):.2f}")
    assert int(last.group(1)) == len(episodes) and [last.group(2), last.group(3)] == rates
    assert rates[0] != rates[1]  # the arms differ, so a pooled rate would show neither


def test_a_line_too_long_for_80_columns_leaves_out_the_time_left_then_the_summary():
    stream = io.StringIO()
    log = ProgressLog("ev-0123456789", total=1000, stream=stream)
    log.update(100, "success A 1.00, B 0.50, C 0.25, D 0.75")
    log.update(200, "success " + ", ".join(f"{arm} 0.50" for arm in "ABCDEFGHIJ"))
    first, second = stream.getvalue().splitlines()
    assert "success A 1.00, B 0.50, C 0.25, D 0.75" in first and len(first) <= 80
    assert "success" not in second and second.startswith("ev-0123456789: 200/1000 (20%) · ")


def test_lines_come_each_tenth_of_the_work():
    stream = io.StringIO()
    log = ProgressLog("ev-1", total=40, stream=stream)
    for done in range(1, 41):
        log.update(done, "success 0.50 [0.30, 0.70]")
    counts = [int(line.split()[1].split("/")[0]) for line in stream.getvalue().splitlines()]
    assert counts == [4, 8, 12, 16, 20, 24, 28, 32, 36, 40]
    assert "~" not in stream.getvalue().splitlines()[-1]  # done: nothing left to estimate


def test_a_resumed_eval_counts_its_earlier_episodes_as_done():
    stream = io.StringIO()
    log = ProgressLog("ev-1", total=100, done=55, stream=stream)
    for done in range(56, 101):
        log.update(done, "success —")
    counts = [int(line.split()[1].split("/")[0]) for line in stream.getvalue().splitlines()]
    assert counts[0] == 60 and counts[-1] == 100


def test_durations_read_as_people_say_them():
    assert [duration_text(s) for s in (0.4, 42, 185, 3720)] == ["0 s", "42 s", "3 min 5 s", "1 h 02 min"]


COIN = Path(__file__).parents[1] / "grid" / "coin.py"


def _progress_counts(stderr: str) -> list[int]:
    return [int(found.group(2)) for line in stderr.splitlines() if (found := LINE.match(line))]


def test_a_piped_grid_prints_progress_lines_of_its_evals(seq_home: Path, tmp_path: Path):
    seq.deploy(str(COIN))
    config = tmp_path / "grid.yaml"
    config.write_text(
        "policies: [coin-player]\n"
        "families:\n  coin:\n    variations:\n      both: {tasks: [heads, tails]}\n"
        "seeds: [0, 1, 2, 3]\ntrials: 2\nworkers: 1\noutput_dir: runs\n"
    )
    done = run_cli("grid", "run", str(config))
    assert done.returncode == 0, done.stderr
    counts = _progress_counts(done.stderr)
    assert len(counts) >= 2 and counts == sorted(counts) and counts[-1] == 16, done.stderr


def test_a_piped_grid_of_several_arms_names_them_within_80_columns(seq_home: Path, tmp_path: Path):
    seq.deploy(str(COIN))
    config = tmp_path / "grid.yaml"
    config.write_text(
        "policies: [coin-player]\n"
        "modes:\n  steady-hands: {params: {skill: 1.0}}\n  shaky-hands: {params: {skill: 0.5}}\n"
        "  trembling-hands: {params: {skill: 0.2}}\n"
        "families:\n  coin:\n    variations:\n      both: {tasks: [heads, tails]}\n"
        "seeds: [0]\ntrials: 1\nworkers: 1\noutput_dir: runs\n"
    )
    done = run_cli("grid", "run", str(config))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("run directory ")]
    assert all(len(line) <= 80 for line in lines), done.stderr  # a path is as long as it is
    words = " ".join(done.stderr.split())
    arms = "steady-hands@coin-player, shaky-hands@coin-player, trembling-hands@coin-player"
    assert "coin/both: eval ev-" in words and f"arms {arms}" in words, done.stderr
