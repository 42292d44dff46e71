"""autograder/batch/executors/slurm/plan.py and task.py entry: slices, the manifest, the job script."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.batch.executors.slurm import plan
from autograder.batch.executors.slurm.executor import state_line
from tests.helpers.paths import ROOT


def test_slices_keep_the_order_and_cover_everyone_once():
    students = [f"s{i}" for i in range(7)]
    parts = plan.slices(students, 3)
    assert parts == [["s0", "s1", "s2"], ["s3", "s4", "s5"], ["s6"]]
    assert plan.slices(students, 10) == [students]
    assert plan.slices([], 3) == []
    with pytest.raises(ValueError, match="per_task"):
        plan.slices(students, 0)


def _manifest() -> plan.Manifest:
    job = {"student": "ada", "digest": "ab" * 32,
           "payload": {"path": "/class/ada", "assignment": "why17", "device": "sim",
                       "time_limit_s": None, "only": None}}
    return plan.Manifest(out="/out", assignment="why17", course=str(ROOT / "course.yml"), key="k" * 16, workers=2,
                         budget_s=1200.0,
                         slices=[[job], [dict(job, student="bob")]])


def test_a_manifest_reads_back_as_written(tmp_path):
    m = _manifest()
    assert plan.Manifest.read(m.write(tmp_path)) == m
    assert m.students() == ["ada", "bob"]


def test_a_manifest_of_another_version_is_refused(tmp_path):
    (tmp_path / plan.MANIFEST).write_text('{"version": 99}')
    with pytest.raises(ValueError, match=f"version-{plan.VERSION}"):
        plan.Manifest.read(tmp_path / plan.MANIFEST)


def test_the_job_script_runs_the_task_from_the_checkout_with_quoted_paths(tmp_path):
    run = tmp_path / "run with space"
    run.mkdir()
    script = plan.write_script(run, python="/opt/venv/bin/python", root=ROOT)
    text = script.read_text()
    assert text.startswith("#!/bin/bash\n") and os.access(script, os.X_OK)
    assert f"cd {ROOT}" in text
    assert f"exec /opt/venv/bin/python -m autograder.batch.executors.slurm.task '{run}/manifest.json'" in text
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0


def test_new_runs_are_listed_oldest_first_and_remember_their_job(tmp_path):
    first = plan.new_run(tmp_path)
    plan.write_job(first, "41", ["sbatch", "x"])
    assert plan.runs(tmp_path) == [first]
    assert plan.read_job(first) == "41"
    assert plan.runs(tmp_path / "nowhere") == []


def test_the_state_line_counts_tasks_by_word():
    words = {0: "done", 1: "running", 2: "pending", 3: "pending", 4: "failed"}
    assert state_line("12", words) == "array 12: 2 pending, 1 running, 1 done, 1 failed"
    assert state_line("12", {0: "pending"}) == "array 12: 1 pending, 0 done"


def test_the_task_outside_an_array_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SLURM_ARRAY_TASK_ID"}
    proc = subprocess.run([sys.executable, "-m", "autograder.batch.executors.slurm.task", str(tmp_path / "m.json")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: SLURM_ARRAY_TASK_ID is not set") and proc.stderr.count("\n") == 1


def test_the_task_with_an_unreadable_manifest_fails_naming_it(tmp_path):
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "0"}
    proc = subprocess.run([sys.executable, "-m", "autograder.batch.executors.slurm.task", str(tmp_path / "m.json")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert (proc.stdout.startswith(f"error: {tmp_path / 'm.json'}: slice 0")
            and "Traceback" not in proc.stdout + proc.stderr)


def test_task_words_follow_squeue_then_keep_final_states_then_give_up():
    from autograder.batch.executors.slurm.executor import task_words
    seen = {0: "COMPLETED", 1: "RUNNING"}
    known = {0: "COMPLETED", 1: "RUNNING", 2: "CANCELLED by 0"}
    # task 2 forgotten after failing; task 3 never seen yet, the array just submitted
    assert task_words(4, seen, known, young=True) == {0: "done", 1: "running", 2: "failed", 3: "pending"}
    assert task_words(4, seen, known, young=False)[3] == "gone"
    # forgotten while running (the queue purged it, no accounting): gone, not running forever
    assert task_words(2, {0: "COMPLETED"}, known, young=False) == {0: "done", 1: "gone"}
    # no answer from the queue: nothing is declared gone
    assert task_words(4, None, known, young=False) == {0: "done", 1: "running", 2: "failed", 3: "pending"}


def _class_manifest(tmp_path, key=None):
    """A real one-student class, its OUT, and a manifest of one slice for it."""
    from autograder.batch.executors.base import Job
    from autograder.batch.plan import grading_key
    from autograder.classdata import discover, store
    from autograder.core import course
    from autograder.lessons.why17.fixtures.classes import make_class

    make_class(tmp_path / "class", 1, kinds=("reference_folder",))
    asg_file = course.find()
    asg = course.load(asg_file).assignment("why17")
    (sub,) = discover.discover(tmp_path / "class", asg).submissions
    digest = store.content_hash(sub)
    job = Job(sub.student, {"path": str(sub.path), "assignment": "why17", "device": "sim",
                                 "time_limit_s": None, "only": None})
    key = key or grading_key(asg, "sim", None, None)
    manifest = plan.Manifest(out=str(tmp_path / "out"), assignment="why17", course=str(asg_file), key=key, workers=1,
                             budget_s=600.0, slices=[[{"student": sub.student, "digest": digest,
                                                       "payload": job.payload}]])
    return manifest.write(tmp_path), sub.student, digest, key


def _task(manifest_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.batch.executors.slurm.task", str(manifest_path)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "SLURM_ARRAY_TASK_ID": "0"},
                          timeout=300)


def test_a_task_whose_checkout_grades_differently_refuses(tmp_path):
    path, student, _, _ = _class_manifest(tmp_path, key="0" * 16)
    proc = _task(path)
    assert proc.returncode == 1
    assert "grades why17 differently from the submitting host" in proc.stdout
    assert not (tmp_path / "out" / student).exists()


def test_a_requeued_task_skips_the_students_it_already_saved(tmp_path):
    from autograder.batch.executors.slurm.task import UnlockedStore
    path, student, digest, key = _class_manifest(tmp_path)
    UnlockedStore(tmp_path / "out", key).save(student, digest, {"score": 1.0, "tests": []}, "<p>kept</p>",
                                              seconds=1.0, source="earlier attempt")
    marker = tmp_path / "out" / student / ".grade-all.json"
    before = marker.stat().st_mtime_ns
    proc = _task(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 students, 1 already graded, grading 0" in proc.stdout
    assert marker.stat().st_mtime_ns == before
    assert (tmp_path / "out" / student / "feedback.html").read_text() == "<p>kept</p>"
