"""Attacks on the simulated GPU (autograder/lessons/why17/fixtures/attacks/gpu_*/bw.py), graded
by the real grader: none earns a GPU check point, and the honest flops.py beside them keeps all
of its GPU checks.

Each attack is the reference submission with bw.py replaced: it reads the device's profile from
memory, files or the environment, walks gc objects and frames, patches or bypasses the virtual
clock, or writes forged device requests, replies and traces into the channel to the grader.
The grader holds the device (autograder/sandbox/gpuhost.py); the child sees only its public
properties. The same profile-reading attack run in one process with the device (as
``python -m shared.simgpu`` runs) does pass the bandwidth checks, so the grading test is not
vacuous: what defeats it is the device being out of reach.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from autograder.core import course, lesson, settings
from autograder.grading.grade import grade_submission
from autograder.lessons.why17.checks.gpu import VERDICTS
from autograder.sandbox import forkserver
from shared import simgpu
from shared.lessons.why17.gpu import RUBRIC, model_reference
from shared.simgpu import local
from shared.simgpu import settings as simsettings
from tests.helpers import lesson_server
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test grades through the fork server (test_probe.py is
#: this folder's fast test).
pytestmark = pytest.mark.slow

ATTACKS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "attacks"
REFERENCE = ROOT / "solutions" / "why17"
GPU_IDS = set(VERDICTS)
NAMES = sorted(p.name for p in ATTACKS.glob("gpu_*") if p.is_dir())


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    lesson_server.keep()


def submission(attack: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for module in ("bw", "flops"):
        shutil.copyfile(REFERENCE / f"{module}.py", dest / f"{module}.py")
    shutil.copyfile(ATTACKS / attack / "bw.py", dest / "bw.py")
    return dest


def test_there_is_an_attack_of_each_class():
    assert NAMES == ["gpu_forge_channel", "gpu_patch_clock", "gpu_read_profile", "gpu_walk_frames"]


@pytest.mark.parametrize("attack", NAMES)
def test_attack_earns_no_gpu_check_and_the_honest_file_keeps_its_own(attack, tmp_path):
    res = grade_submission(submission(attack, tmp_path / "sub"), only=GPU_IDS)
    tests = {t["check"]: t for t in res["tests"]}
    assert set(tests) == GPU_IDS
    bw = {c: t["score"] for c, t in tests.items() if RUBRIC.module[RUBRIC.ids()[c][1]] == "bw"}
    flops = {c: t for c, t in tests.items() if RUBRIC.module[RUBRIC.ids()[c][1]] == "flops"}
    assert bw and all(score == 0 for score in bw.values()), {c: s for c, s in bw.items() if s}
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] > 0 for t in flops.values())


def test_the_profile_reading_attack_reads_an_in_process_device_yet_times_nothing():
    """Where the device shares the student's process (python -m shared.simgpu), the attack finds
    the seeded profile and returns exactly what the model predicts; it still fails every bw
    check, since nothing it timed depends on the device's speed (the verdicts hold the number to
    the work between the clock readings). In the grader the profile is not in its process at all."""
    simgpu.install()
    spec = importlib.util.spec_from_file_location("attack_gpu_read_profile", ATTACKS / "gpu_read_profile" / "bw.py")
    attack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attack)
    run = local.LocalRunner({"bw": attack}, model_reference)
    cfg = simsettings.ideal("h100-sxm", 7)
    value = run.student("bw", "copy_bandwidth", 8 * cfg["l2_bytes"], iters=10, sim=cfg)
    assert value == pytest.approx(cfg["bw_gbs"] * cfg["copy_efficiency"])   # the profile was read
    bw_checks = [vid for vid, (_c, f) in RUBRIC.ids().items() if RUBRIC.module[f] == "bw"]
    verdict = VERDICTS["sync_present"](run, "h100-sxm", 7)
    assert "times nothing that depends on the device's speed" in verdict.message
    assert not any(VERDICTS[vid](run, "h100-sxm", 7).passed for vid in bw_checks)


PROBE = '''
import gc, os, sys

def look():
    """What of the device a student's process can find during a call on the simulated GPU."""
    import torch
    tables = [o for o in gc.get_objects() if isinstance(o, dict) and "bw_gbs" in o]
    found = sorted({float(o[k]) for o in tables for k in ("bw_gbs", "peak_tflops", "l2_speedup")
                    if isinstance(o.get(k), (int, float))})
    props = torch.cuda.get_device_properties(0)
    return {"found": found, "env": os.environ.get("@SECRET_ENV@"),
            "l2": props.L2_cache_size, "name": torch.cuda.get_device_name()}
'''.replace("@SECRET_ENV@", settings.SIM_SECRET.name)


def test_during_a_call_the_child_holds_no_profile_only_the_device_properties(tmp_path, monkeypatch):
    from autograder.sandbox.parent import Limits, Sandbox

    monkeypatch.setenv(settings.SIM_SECRET.name, "grader-only")
    (tmp_path / "probe.py").write_text(PROBE)
    cfg = simgpu.config("h100", seed=12345)
    with Sandbox(tmp_path, Limits(time_limit_s=120)) as box:
        seen, trace = box.call("probe", "look", sim=cfg, trace=True)
    # The hardware table's own numbers are public (shared/data/hardware.yml); the seeded ones are not there.
    assert seen["found"] and not {cfg["bw_gbs"], cfg["peak_tflops"], cfg["l2_speedup"]} & set(seen["found"])
    assert (seen["env"], seen["l2"], seen["name"]) == (None, cfg["l2_bytes"], cfg["cuda_name"])
    assert trace["clock_reads"] == 0 and trace["profile"] == "h100-sxm"     # the grader's own trace


def test_the_seed_needs_the_graders_secret_and_stays_the_same_for_the_same_files():
    from autograder.grading import simseed as seed

    first, again, other = seed.sim_seed(42, "one"), seed.sim_seed(42, "one"), seed.sim_seed(42, "two")
    assert first == again and first != other and seed.sim_seed(43, "one") not in (first, other)


def test_a_secret_always_exists_kept_with_the_course_readable_by_the_grader_only(tmp_path, monkeypatch):
    from autograder.grading import simseed as seed

    monkeypatch.delenv(seed.ENV, raising=False)
    made = seed.course_secret(tmp_path)
    path = tmp_path / seed.SECRET_FILE
    assert made.source == "course file" and len(made.text) == 2 * seed.SECRET_BYTES
    assert path.stat().st_mode & 0o777 == 0o600
    assert seed.course_secret(tmp_path) == made                      # the same on every later run
    monkeypatch.setenv(seed.ENV, "from the environment")
    assert seed.course_secret(tmp_path) == seed.Secret("from the environment", "environment")
    monkeypatch.delenv(seed.ENV)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):                               # root writes anyway: make it a file
            locked.chmod(0o700)
            locked.rmdir()
            locked.write_text("not a folder")
        fallback = seed.course_secret(locked)
    finally:
        if locked.is_dir():
            locked.chmod(0o700)
    assert fallback.source == "this process only" and fallback.text != made.text


def test_the_secret_is_not_shipped_to_students(tmp_path):
    """The student release and zip hold assignments/ only; the secret file is not in them."""
    from autograder.exports import bundle
    from autograder.grading import simseed as seed

    names = {p.name for p in Path(bundle.__file__).resolve().parents[2].joinpath("assignments").rglob("*")}
    assert seed.SECRET_FILE not in names


ENVIRON_PROBE = '''
import ctypes, os

def look():
    """The environment a student's process can find, after making itself dumpable."""
    libc = ctypes.CDLL(None)
    libc.prctl(4, 1, 0, 0, 0)          # PR_SET_DUMPABLE
    found = {"os.environ": dict(os.environ)}
    for path in ("/proc/self/environ", "/proc/1/environ", f"/proc/{os.getppid()}/environ"):
        try:
            with open(path, "rb") as fh:
                found[path] = fh.read().decode("utf-8", "replace")
        except OSError as exc:
            found[path] = type(exc).__name__
    return found
'''


@pytest.mark.parametrize("fork_server", [True, False])
def test_no_secret_or_ta_variable_reaches_student_code_even_when_dumpable(fork_server, tmp_path, monkeypatch):
    """The fork server and every child start from an environment built from scratch: neither the
    simulated GPU's secret nor any other variable of the TA's shell is in the child's environment
    or in the memory /proc shows of it, even after prctl(PR_SET_DUMPABLE, 1)."""
    from autograder.grading import simseed as seed
    from autograder.sandbox.parent import Limits, Sandbox

    monkeypatch.setenv(seed.ENV, "grader-only-secret-4711")
    monkeypatch.setenv("TA_CLOUD_TOKEN", "ta-token-0815")
    (tmp_path / "probe.py").write_text(ENVIRON_PROBE)
    if fork_server:
        forkserver.start(**lesson.server_imports(course.load().assignment()))
    try:
        with Sandbox(tmp_path, Limits(time_limit_s=120)) as box:
            found, _trace = box.call("probe", "look")
    finally:
        if fork_server:
            forkserver.stop()
    text = repr(found)
    assert "grader-only-secret-4711" not in text and "ta-token-0815" not in text
    assert "PATH" in found["os.environ"]                             # the probe did read an environment

def test_the_grader_answers_what_a_cuda_program_asks_and_refuses_anything_else():
    from autograder.sandbox import gpuhost as host
    from autograder.sandbox.gpuhost import Refused

    class Child:
        who = "your code"

    child, sent = Child(), []
    child.device, public = host.open(simgpu.config("h100", seed=3))
    assert "bw_gbs" not in public and public["l2_bytes"] == child.device.cfg["l2_bytes"]
    copy = {"op": "launch", "kind": "copy", "reads": [[1, 0, 2**30]], "writes": [[2, 0, 2**30]],
            "read_bytes": 2**30, "write_bytes": 2**30, "flops": 0.0, "dtype": "uint8", "stream": 0}
    host.serve(child, {"dev": [{"op": "alloc", "aid": 1, "bytes": 2**30}, {"op": "alloc", "aid": 2, "bytes": 2**30},
                               {"op": "record", "event": 1, "stream": 0}, copy,
                               {"op": "record", "event": 2, "stream": 0}],
                       "ask": {"op": "elapsed", "start": 1, "end": 2}}, lambda c, m: sent.append(m))
    assert sent == [{"dev_error": "Both events must be completed before calculating elapsed time."}]
    host.serve(child, {"dev": [{"op": "sync", "stream": None}], "ask": {"op": "elapsed", "start": 1, "end": 2}},
               lambda c, m: sent.append(m))
    assert sent[-1]["dev_reply"] > 0 and child.device.trace()["largest_alloc_bytes"] == 2**30
    for bad in ({"dev": [{"op": "set_clock", "host_s": 0.0}]}, {"dev": [dict(copy, reads="all")]},
                {"dev": [dict(copy, kind="teleport")]}, {"dev": [], "ask": {"op": "alloc", "aid": 3, "bytes": 1}},
                {"dev": "nope"}, {"dev": [{"op": "alloc", "aid": -1, "bytes": 1}]}):
        with pytest.raises(Refused, match="a request no CUDA program makes"):
            host.serve(child, bad, lambda c, m: sent.append(m))
    nobody = Child()
    with pytest.raises(Refused):                     # device requests outside a simulated call
        host.serve(nobody, {"dev": []}, lambda c, m: None)


HANG_THEN_GPU = '''
import torch

def hang():
    while True:
        pass

def copy():
    """One copy on the simulated GPU, timed by the device's events."""
    src = torch.zeros(2**20, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    dst.copy_(src)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)
'''


def test_a_call_after_another_functions_timeout_gets_the_simulated_gpu(tmp_path):
    """A hang is charged to the function that hung: the fresh child that runs the next function
    holds that call's device, so its GPU requests are served, not refused as garbage."""
    from autograder.core.errors import StudentTimeout
    from autograder.sandbox.parent import Limits, Sandbox

    (tmp_path / "m.py").write_text(HANG_THEN_GPU)
    cfg = simgpu.config("h100", seed=7)
    with Sandbox(tmp_path, Limits(time_limit_s=3)) as box:
        with pytest.raises(StudentTimeout):
            box.call("m", "hang")
        ms, trace = box.call("m", "copy", sim=cfg, trace=True)
        assert box.starts == 2
    assert ms > 0 and trace["profile"] == "h100-sxm"
