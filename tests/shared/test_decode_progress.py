"""The decode benchmark's progress: each phase on stderr with the time left, the results alone on
stdout, nothing with --quiet, and fewer timed steps by default on a CPU.

The Progress class is driven with a clock the test advances (seconds), so its times are exact; the
command runs for real, in a child process, on the tiny config.
"""
from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from shared.decode import cli, progress
from tests.helpers.paths import ROOT

#: The report's first words, one line each (shared/decode/bench.py's report), in order.
REPORT = ("model", "bytes/step", "", "bandwidth", "ceiling", "measured", "% of ceiling", "read-only", "dtype")


class Clock:
    """Seconds that move only when the test says so."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_log_gets_a_line_at_start_at_each_quarter_and_at_the_end():
    out, clock = io.StringIO(), Clock()
    phase = progress.Progress(out, live=False, clock=clock).phase("decode", 8, "steps")
    for _ in range(8):
        clock.now += 1.5
        phase.advance()
    phase.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "decode: 8 steps ..."
    assert lines[1] == "decode: [######..................] 2/8 steps, 3.0 s, about 9.0 s left"
    assert lines[2].startswith("decode: [############") and "4/8 steps, 6.0 s, about 6.0 s left" in lines[2]
    assert "6/8 steps, 9.0 s, about 3.0 s left" in lines[3]
    assert lines[4:] == ["decode: done in 12 s"]


def test_a_terminal_gets_one_line_redrawn_in_place():
    out, clock = io.StringIO(), Clock()
    shown = progress.Progress(out, live=True, clock=clock)
    phase = shown.phase("weights", 4, "tensors")
    for _ in range(4):
        clock.now += 30
        phase.advance()
    phase.finish()
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("weights: done in 2 min 00 s\n")
    assert "\r\033[Kweights: [######..................] 1/4 tensors, 30 s, about 90 s left" in text


@pytest.mark.parametrize("seconds, text", [(0.04, "0.0 s"), (9.94, "9.9 s"), (42.4, "42 s"), (185, "3 min 05 s")])
def test_seconds_read_as_people_say_them(seconds, text):
    assert progress.seconds_text(seconds) == text


def decode_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shared.decode_bench", "--model", "tiny", "--context", "16",
                           "--device", "cpu", "--threads", "1", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def default_run() -> subprocess.CompletedProcess:
    return decode_bench()


@pytest.mark.slow
def test_stdout_holds_the_results_alone_and_stderr_every_phase(default_run):
    assert default_run.returncode == 0, default_run.stderr
    lines = default_run.stdout.splitlines()
    assert len(lines) == len(REPORT) and all(line.startswith(word) for line, word in zip(lines, REPORT))
    phases = re.findall(r"^(.+): done in ", default_run.stderr, flags=re.M)
    assert phases == ["bandwidth before the decode", "weights", "decode", "bandwidth after the decode"]
    assert "left" in default_run.stderr and "progress on stderr, results on stdout" in default_run.stderr


@pytest.mark.slow
def test_a_cpu_run_times_cpu_tokens_steps_by_default(default_run):
    assert f", {cli.CPU_TOKENS} tokens, cpu" in default_run.stdout
    assert f"decode: {cli.CPU_TOKENS + 2} steps ..." in default_run.stderr   # two warm-up steps


def test_the_help_names_both_defaults():
    help_text = " ".join(subprocess.run([sys.executable, "-m", "shared.decode_bench", "--help"], cwd=ROOT,
                                        capture_output=True, text=True, timeout=120).stdout.split())
    assert f"{cli.CPU_TOKENS} on a CPU" in help_text and f"default {cli.GPU_TOKENS} on a GPU" in help_text


@pytest.mark.slow
def test_quiet_prints_no_progress_and_a_given_bandwidth_skips_its_phases():
    run = decode_bench("--quiet", "--tokens", "2")
    assert run.returncode == 0 and run.stderr == "" and run.stdout.startswith("model")
    given = decode_bench("--bw-gbs", "100", "--tokens", "2")
    assert given.returncode == 0 and "bandwidth before" not in given.stderr and "decode: done" in given.stderr
