"""The adversarial set's manifest: an entry left open on one side (the CPU argument checks or the
simulated GPU's) is an expected failure there only, so a verdict the other side reaches is still
asserted."""
from __future__ import annotations

import subprocess
import sys

from autograder.lessons.why17.fixtures import adversarial
from autograder.lessons.why17.fixtures.adversarial import Entry
from tests.helpers.paths import ROOT


def entry(reason: str) -> Entry:
    return Entry("good", "x", None, "a style", open=reason)


def test_an_open_reason_is_split_by_the_side_it_names():
    both = entry("CPU: counts rows; still; GPU: earns 18 GPU checks")
    assert both.open_on("CPU") == "CPU: counts rows; still"
    assert both.open_on("GPU") == "GPU: earns 18 GPU checks"
    assert entry("GPU: fails sync_present; the CPU argument checks pass it").open_on("CPU") == ""


def test_a_reason_without_a_side_concerns_both_and_none_concerns_neither():
    assert entry("the probe shows no kernels").open_on("CPU") == "the probe shows no kernels"
    assert entry("the probe shows no kernels").open_on("GPU") == "the probe shows no kernels"
    assert entry("").open_on("GPU") == ""


def test_every_open_entry_of_the_set_is_open_on_a_side():
    for e in adversarial.entries():
        if e.open:
            assert e.open_on("CPU") or e.open_on("GPU"), e.name


def test_the_bench_refuses_a_name_the_set_lacks_instead_of_grading_nothing():
    """A TA's typo in --names (or a folder-qualified name) graded nothing and printed "0 of 0
    verdicts as expected", exit 0. Now an unknown name is one line naming it, exit 2; a name may
    carry its folder."""
    bench = [sys.executable, str(ROOT / "bench" / "adversarial.py")]
    done = subprocess.run([*bench, "--names", "good/accelerator_sync,no_such_entry"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1].endswith("manifest.yml: no_such_entry")
