"""What a submission's threads may do: the bound on processes+threads the results declare is the
one in force wherever the child runs, and CPU its threads use between calls is charged to it.

Real children through the real jail (autograder/sandbox/pidsgroup.py, between.py), with the
attack files attacks/thread_bomb and attacks/thread_burner.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from autograder.core.errors import StudentCrashed
from autograder.sandbox import between, forkserver, isolation, pidsgroup, policy
from autograder.sandbox.parent import Limits, Sandbox
from autograder.sandbox.perfile import PerFileSandbox
from shared.simgpu import config as simgpu_config
from tests.helpers.paths import ROOT

ATTACKS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "attacks"
PROT = isolation.protection()
LIMITS = Limits(time_limit_s=120)
JAIL = policy.JailLimits.from_sandbox(LIMITS)
NO_PIDS_GROUP = dict(PROT.why_not).get("pids cgroup", "")


def attack(name: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ATTACKS / name / "bw.py", dest / "bw.py")
    return dest


def bare(folder: Path, **options) -> Sandbox:
    """A child without torch (the attacks here need none); the simulated GPU only when asked."""
    return Sandbox(folder, LIMITS, preload=(), simgpu=options.pop("simgpu", False), **options)


def test_the_declared_bound_on_processes_and_threads_names_what_enforces_it():
    text = PROT.describe(JAIL)
    declared = f"{JAIL.processes} processes+threads "
    if PROT.pids_cgroup:
        assert declared + f"(pids cgroup {PROT.pids_cgroup})" in text
    elif not PROT.nproc_enforced:
        assert declared + "NOT bounded" in text and f"no pids cgroup ({NO_PIDS_GROUP})" in text
    else:
        assert declared + "(RLIMIT_NPROC" in text or declared + "more than the grader's user" in text
        assert f"no pids cgroup ({NO_PIDS_GROUP})" in text


@pytest.fixture(params=["fresh interpreter", "fork server", "simulated GPU"])
def entry(request):
    """How the child starts and runs the bomb: a fresh interpreter, a fork server's child, or a
    fork server's child whose calls run on the simulated GPU."""
    if request.param != "fresh interpreter":
        forkserver.start(preload=(), later=(), huge_pages=False)
        request.addfinalizer(forkserver.stop)
    return request.param


@pytest.mark.slow
def test_a_thread_bomb_stops_at_the_declared_bound_at_import_and_in_calls(entry, tmp_path):
    sim = simgpu_config() if entry == "simulated GPU" else None
    with bare(attack("thread_bomb", tmp_path / "sub"), simgpu=sim is not None) as box:
        (at_import, in_call, alive), _ = box.call("bw", "threads_started", sim=sim)
        peak = pidsgroup.peak(policy.group_name(box.child.host_dir)) if PROT.pids_cgroup else None
    assert at_import > 0 and alive == 1 + at_import + in_call <= JAIL.processes
    if peak is not None:   # everything in the child's group: its own tasks and the jail's
        assert peak <= JAIL.processes + isolation.jail_tasks(PROT.mode == "namespaces")


@pytest.mark.slow
@pytest.mark.skipif(not PROT.pids_cgroup, reason=f"no pids cgroup here: {NO_PIDS_GROUP}")
def test_the_pids_group_holds_where_rlimit_nproc_would_not(monkeypatch, tmp_path):
    """A kernel that does not count the child's threads against its RLIMIT_NPROC (its uid
    changed after the count was taken, a user namespace: the path where a bomb once started
    5,000 threads) is stood in for by a child whose RLIMIT_NPROC is far above the declared bound."""
    monkeypatch.setattr(isolation, "_process_cap", lambda limits: 8192)
    with bare(attack("thread_bomb", tmp_path / "sub")) as box:
        (at_import, in_call, alive), _ = box.call("bw", "threads_started")
    assert 0 < alive <= JAIL.processes


@pytest.mark.slow
def test_threads_that_use_the_cpu_between_calls_stop_the_child_with_one_line(tmp_path):
    with bare(attack("thread_burner", tmp_path / "sub")) as box:
        with pytest.raises(StudentCrashed) as info:
            for _ in range(400):       # each gap: the burners run while the grader waits
                box.call("bw", "measured_bandwidth")
                time.sleep(0.25)
        message = str(info.value)
        assert "CPU s between calls" in message and "threads or processes it started" in message
        assert "\n" not in message and box.child is None
        with pytest.raises(StudentCrashed) as again:      # not called again: no child starts
            box.call("bw", "copy_bandwidth", (2**20,))
        assert again.value is info.value and box.child is None


def test_a_thread_left_working_after_each_call_is_charged_however_soon_the_next_call_comes(tmp_path):
    """A call that returns while a thread it started still works: what that thread does before
    the next request goes out depends on how soon the grader sends it and on how busy the machine
    is. The next request waits while such a thread works, so its CPU is charged between calls
    even when the calls come back to back, as they do in a grading."""
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "leftover.py").write_text(
        "import hashlib, threading, time\n"
        "def _burn():\n"
        "    end = time.thread_time() + 0.3\n"
        "    while time.thread_time() < end:\n"
        "        hashlib.sha256(b'x' * 2**20).digest()\n"
        "def start():\n"
        "    threading.Thread(target=_burn, daemon=True).start()\n"
        "    return 1\n")
    with bare(folder) as box:
        with pytest.raises(StudentCrashed) as info:
            for _ in range(8):                  # 0.3 CPU s each: the allowance is used by the 4th
                box.call("leftover", "start")
        assert "CPU s between calls" in str(info.value)


@pytest.mark.slow
def test_a_thread_a_call_starts_and_joins_is_no_charge(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "timer.py").write_text(
        "import hashlib, threading\n"
        "def work(n):\n"
        "    out = []\n"
        "    t = threading.Thread(target=lambda: out.append(sum(len(hashlib.sha256(b'x' * 2**20).digest())\n"
        "                                                     for _ in range(n))))\n"
        "    t.start(); t.join()\n"
        "    return out[0]\n")
    with bare(folder) as box:
        for _ in range(20):
            assert box.call("timer", "work", (50,))[0] == 32 * 50
            time.sleep(0.05)
        assert box.child.idle_cpu <= between.ALLOWANCE_S / 4


def test_processes_a_call_leaves_burn_cpu_until_the_sweep_and_are_not_charged_between_calls(monkeypatch, tmp_path):
    """A process a call leaves running is the call's residue: the sweep after the call kills it.
    Whatever it burns before the sweep ends (longer on a busy machine, here a sweep that starts
    3 s late) is not CPU used between calls, so the child is not stopped for it."""
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "leaver.py").write_text(
        "import os\n"
        "def spin():\n"
        "    if os.fork() == 0:\n"
        "        while True:\n"
        "            pass\n"
        "    return 1\n")
    sweep = isolation.sweep

    def late_sweep(pid):
        time.sleep(3.0)
        return sweep(pid)

    monkeypatch.setattr(isolation, "sweep", late_sweep)
    box = PerFileSandbox(folder, LIMITS, preload=(), simgpu=False)
    try:
        for _ in range(2):
            assert box.call("leaver", "spin")[0] == 1
        assert box.current[2].child.idle_cpu <= between.ALLOWANCE_S
    finally:
        box.close()
