"""Malicious submissions (autograder/lessons/why17/fixtures/attacks/*/bw.py) graded by the real grader.

Each attack is the reference solution with bw.py replaced by a hostile one. It returns the same
values as attacks/baseline/bw.py, so "gains nothing" is exact: on every check the attack scores
at most what the baseline scores, and the honest files beside it (predict.py, flops.py,
roofline.py) are graded exactly as the baseline's are. Attacks that search or reach for
something are also called directly through the sandbox, and what they found comes back as a
value: the tests assert it holds nothing secret.

The grading runs use a fork server (as grade-all does), so each child starts without paying the
torch import; every child still runs in its own jail.
"""
from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from autograder.core import course
from autograder.core.errors import StudentCrashed
from autograder.grading.grade import grade_submission
from autograder.sandbox import isolation, policy
from autograder.sandbox.parent import Limits, Sandbox
from autograder.sandbox.perfile import PerFileSandbox
from tests.helpers import lesson_server, loopback
from tests.helpers.jailed import needs_namespaces
from tests.helpers.paths import ROOT
from tests.helpers.procs import processes_named

#: Slow, left out of `make check`: every test grades an attack through the fork server.
pytestmark = pytest.mark.slow

ATTACKS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "attacks"
REFERENCE = ROOT / "solutions" / "why17"
MODULES = ("bw", "flops", "predict", "roofline")
#: A bounded set of checks: every bw check (the attacks' target) and honest work of each other task.
ONLY = {"bw_returns_gbs", "bw_honours_args", "bw_sweep_sizes", "bw_rejects_bad", "sync_present",
        "units_gb_per_s", "errors_predict_decode", "law_bandwidth_doubles", "decode_quantized",
        "ceiling_kv_cache", "flops_returns_tflops", "roofline_loglog"}
PROT = isolation.protection()
ATTACK_NAMES = sorted(p.name for p in ATTACKS.iterdir() if p.is_dir() and p.name != "baseline")
#: Attacks that never return: course.yml's per-call limit must be what stops them. Their loop of
#: ``time.sleep`` on the simulated GPU moves the device's clock, so the call passes its limit by
#: that clock at once, as it would in wall seconds on a GPU (shared/simgpu/device.py ``handle``).
NEVER_RETURN = {"sleep_forever"}


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    lesson_server.keep()


@pytest.fixture(scope="module", autouse=True)
def sandbox_in_force(fork_server, tmp_path_factory):
    """Refuse to unleash the attacks unless student code really runs sandboxed (not as root)."""
    folder = tmp_path_factory.mktemp("probe")
    (folder / "probe.py").write_text("import os\ndef uid():\n    return os.getuid()\n")
    with Sandbox(folder, Limits(time_limit_s=120)) as box:
        uid, _ = box.call("probe", "uid")
    if uid == 0:
        pytest.fail("student code runs as root: autograder/sandbox/parent.py does not launch children through "
                    "the jail (isolation.wrap); the attacks were not run")


def submission(attack: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for module in MODULES:
        shutil.copyfile(REFERENCE / f"{module}.py", dest / f"{module}.py")
    shutil.copyfile(ATTACKS / attack / "bw.py", dest / "bw.py")
    return dest


def grade(attack: str, where: Path) -> dict:
    # course.yml's per-call limits (a multiple of the reference's time for the same call, at least
    # its floor, at most its ceiling): honest calls get many times what they need, a hanging
    # attack costs the floor
    return grade_submission(submission(attack, where), course.load().assignment(), only=ONLY)


def scores(results: dict) -> dict[str, float]:
    return {t["check"]: t["score"] for t in results["tests"]}


@pytest.fixture(scope="session")
def baseline(tmp_path_factory) -> dict:
    """The baseline's results, graded once per test process: the module's cases go to the
    workers in several units (tests/conftest.py), and a module fixture is graded again for each."""
    return grade("baseline", tmp_path_factory.mktemp("baseline"))


@pytest.mark.parametrize("attack", ATTACK_NAMES)
def test_attack_gains_nothing_and_honest_work_is_still_graded(attack, baseline, tmp_path):
    res = grade(attack, tmp_path / "sub")
    got, base = scores(res), scores(baseline)
    assert set(got) == set(base) == ONLY
    gained = {c: (got[c], base[c]) for c in ONLY if got[c] > base[c]}
    assert gained == {}, f"{attack} scored more than the baseline on {gained}"
    honest = {t["check"]: t["score"] for t in baseline["tests"] if t["task"] != "task1"}
    assert {c: got[c] for c in honest} == honest, f"{attack} spoiled the grading of its honest files"
    assert res["score"] <= baseline["score"]
    assert "FORGED" not in json.dumps(res)
    if attack in NEVER_RETURN:       # it was the per-call limit that stopped it
        stopped = [t["check"] for t in res["tests"] if "did not return within" in t["output"]]
        assert stopped and all(t["task"] == "task1" for t in res["tests"] if t["check"] in stopped), stopped


@needs_namespaces
def test_disk_search_finds_no_grader_checks_or_solutions(tmp_path):
    with Sandbox(submission("read_secrets", tmp_path / "sub"), Limits(time_limit_s=300)) as box:
        found, _ = box.call("bw", "search")
    assert found == [], f"the child found grader files: {found[:5]}"


@needs_namespaces
def test_proc_shows_nothing_of_the_grader(tmp_path):
    with Sandbox(submission("read_proc", tmp_path / "sub"), Limits(time_limit_s=60)) as box:
        found, _ = box.call("bw", "search")
    assert found["hits"] == []
    assert len(found["seen"]) <= 4, f"the child sees processes beyond its own sandbox: {found['seen']}"


@needs_namespaces
def test_results_written_by_the_child_stay_in_its_private_folders(tmp_path):
    outside = tmp_path / "results"
    outside.mkdir()
    (outside / "results.json").write_text('{"score": 1}')
    with Sandbox(submission("write_results", tmp_path / "sub"), Limits(time_limit_s=120)) as box:
        written, _ = box.call("bw", "attack")
        workdir = box.child.host_dir
    assert written, "the attack wrote nothing at all: it would prove nothing"
    assert all(p.startswith((str(workdir), "/tmp/")) for p in written), written
    assert (outside / "results.json").read_text() == '{"score": 1}'
    for name in ("results.json", "gradebook.csv"):       # the child's /tmp was its own
        host = Path("/tmp") / name
        assert not host.exists() or "FORGED" not in host.read_text(errors="replace")


@needs_namespaces
def test_network_is_unreachable_even_on_the_graders_loopback(tmp_path):
    with loopback.listener() as (port, received):
        with Sandbox(submission("network", tmp_path / "sub"), Limits(time_limit_s=60)) as box:
            reached, _ = box.call("bw", "reach", ([port],))
    assert reached == [] and received == []


@needs_namespaces
def test_resource_attacks_hit_their_limits(tmp_path):
    limits = Limits(time_limit_s=120)
    jail = policy.JailLimits.from_sandbox(limits)
    folders = {name: submission(name, tmp_path / name) for name in
               ("fork_bomb", "memory_hog", "giant_file", "many_files")}
    with Sandbox(folders["fork_bomb"], limits) as box:
        forks, _ = box.call("bw", "bomb", (2.0,))
    assert 0 < forks < jail.processes
    with Sandbox(folders["memory_hog"], limits) as box:
        try:
            mib, _ = box.call("bw", "hog")
        except StudentCrashed as exc:   # its memory cgroup saw it fill most of the limit: charged once
            mib = int(re.search(r"took (\d+) MiB", str(exc)).group(1))
    assert mib * 2**20 <= jail.address_space_bytes
    with Sandbox(folders["giant_file"], limits) as box:
        size, _ = box.call("bw", "fill")
    assert size <= jail.file_size_bytes
    with Sandbox(folders["many_files"], limits) as box:
        opened, _ = box.call("bw", "exhaust")
    assert opened < jail.open_files


@needs_namespaces
def test_processes_a_call_leaves_running_are_killed_when_it_returns(tmp_path):
    box = PerFileSandbox(submission("fork_bomb", tmp_path / "sub"), Limits(time_limit_s=60), heavy=("bw", "flops"))
    try:
        forks, _ = box.call("bw", "bomb", (1.0,))
        launcher = box.current[2].child.proc.pid
        assert forks > 0 and isolation.strays(launcher) == []
        value, _ = box.call("bw", "measured_bandwidth")        # the child itself lives on
        assert value == 25.0 and box.starts == 1
    finally:
        box.close()


LEAVERS = """\
import os, time

def _sleeper():
    time.sleep(120)
    os._exit(0)

def child():
    if os.fork() == 0:
        _sleeper()
    return 1

def orphan():
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            _sleeper()
        os._exit(0)
    os.waitpid(pid, 0)
    return 2

def clean():
    return 3
"""


@needs_namespaces
@pytest.mark.parametrize("left", ["child", "orphan"])
def test_the_quick_look_after_a_call_sees_what_the_full_walk_sees(tmp_path, left):
    (tmp_path / "m.py").write_text(LEAVERS)
    with Sandbox(tmp_path, Limits(time_limit_s=30), preload=(), simgpu=False) as box:
        box.call("m", "clean")
        watch = isolation.StrayWatch(box.child.proc.pid)
        assert watch.strays() == [] and watch.tree is not None     # the first look learnt the tree
        box.call("m", left)                     # a plain Sandbox does not sweep: the stray stays
        found = isolation.strays(box.child.proc.pid)
        assert len(found) == 1 and watch.strays() == found
        isolation.sweep(box.child.proc.pid)
        assert watch.strays() == []


@needs_namespaces
def test_processes_left_by_a_call_die_before_the_next_call(tmp_path):
    (tmp_path / "m.py").write_text(LEAVERS)
    box = PerFileSandbox(tmp_path, Limits(time_limit_s=30), preload=(), simgpu=False)
    try:
        for function, value in (("child", 1), ("orphan", 2), ("clean", 3)):
            assert box.call("m", function)[0] == value
            assert isolation.strays(box.current[2].child.proc.pid) == [], function
        assert box.starts == 1
    finally:
        box.close()


def test_escaped_grandchild_does_not_outlive_grading(tmp_path):
    grade("escapee", tmp_path / "sub")
    deadline = time.monotonic() + 10
    while processes_named("why17-escapee") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_named("why17-escapee") == []
