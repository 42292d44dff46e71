"""autograder/batch/executors/base.py: grade-all records each outcome the moment an executor yields
it, so a stop mid-batch keeps every finished student; an executor that leaves some ungraded makes
the run exit 1; closing an executor early stops its workers.

grade-all runs in this process on the tiny course (tests/fixtures/tiny_course) with stand-in
executors, so no worker starts; the pool test runs stand-in workers speaking the JSON-lines protocol.
"""
from __future__ import annotations

import csv
import io
import json
import shutil
import sys
import textwrap

import pytest

from autograder.batch import run as batch
from autograder.batch.executors import local as pool
from autograder.batch.executors.base import Incomplete, Job, Outcome
from autograder.batch.options import BatchOptions
from autograder.core import course
from tests.helpers.tiny_course import TINY

STUDENTS = ("ann", "bob", "cid")


def _results(score: float) -> dict:
    return {"score": score, "max_score": 10.0, "output": "", "visibility": "visible",
            "tests": [{"name": "double d [doubles_like_reference]", "task": "double", "status": "passed",
                       "check": "doubles_like_reference", "score": score, "max_score": 10.0, "output": ""}]}


@pytest.fixture
def klass(tmp_path):
    """Three students of the tiny course."""
    for name in STUDENTS:
        shutil.copytree(TINY / "submissions" / "good_adds", tmp_path / "class" / name)
    return tmp_path / "class", tmp_path / "out"


def _grade(klass, executor) -> tuple[int, str]:
    stream = io.StringIO()
    status = batch.grade_all(klass[0], klass[1], BatchOptions(assignment="tiny", executor=executor),
                             the_course=course.load(TINY / "course.yml"), stream=stream)
    return status, stream.getvalue()


def test_each_outcome_is_saved_as_it_arrives_and_a_stop_keeps_them(klass):
    out = klass[1]
    seen_before_next = []

    class StopsAfterTwo:
        def __init__(self, setup):
            self.setup = setup

        def grade(self, jobs):
            assert [j.key for j in jobs] == list(STUDENTS) and all(j.digest for j in jobs)
            yield Outcome(jobs[0], _results(10.0), None, 1.0)
            seen_before_next.append((out / "ann" / "results.json").is_file())
            yield Outcome(jobs[1], None, "grading stopped twice: the grading worker was killed", 2.0)
            raise KeyboardInterrupt    # Ctrl-C while the third is graded

    status, text = _grade(klass, StopsAfterTwo)
    assert status == 130 and "interrupted: 2 of 3 graded this run" in text
    assert seen_before_next == [True]
    assert json.loads((out / "ann" / "results.json").read_text())["score"] == 10.0
    assert "killed" in json.loads((out / "bob" / "results.json").read_text())["output"]
    assert not (out / "cid").exists()
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert [r["student"] for r in rows] == ["ann", "bob"]


def test_an_executor_that_left_some_ungraded_exits_1_saying_so(klass):
    class LeavesTwo:
        def __init__(self, setup):
            pass

        def grade(self, jobs):
            yield Outcome(jobs[0], _results(4.0), None, 1.0)
            raise Incomplete("2 students not graded: rerun the same command to grade just them")

    status, text = _grade(klass, LeavesTwo)
    assert status == 1
    assert "2 students not graded: rerun the same command to grade just them\n" in text
    assert "wrote 1 results, gradebook.csv" in text


def test_an_outcome_the_executor_saved_is_counted_not_saved_again(klass):
    class SavesItself:   # as a Slurm array task does, into the same store
        def __init__(self, setup):
            self.store = setup.store

        def grade(self, jobs):
            for job in jobs:
                self.store.save(job.key, job.digest, _results(6.0), "<p>node</p>", seconds=3.0,
                                source="node", key=self.store.key)
                yield Outcome(job, self.store.results(job.key), None, 3.0, saved=True)

    status, text = _grade(klass, SavesItself)
    assert status == 0 and "last: cid 6/10" in text
    assert not (klass[1] / "regrades.csv").exists()
    assert (klass[1] / "ann" / "feedback.html").read_text() == "<p>node</p>"
    rows = list(csv.DictReader((klass[1] / "gradebook.csv").open()))
    assert [r["total"] for r in rows] == ["6", "6", "6"]


STAND_IN = textwrap.dedent("""
    import json, sys
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        print(json.dumps({"id": job["id"], "results": {"score": 1, "tests": []}}), flush=True)
""")


def test_closing_the_outcomes_early_kills_the_workers(tmp_path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    workers = pool.Pool(2, budget_s=60.0, worker_argv=[sys.executable, str(script)])
    outcomes = workers.outcomes([Job(k, {"path": k}) for k in "abcdef"])
    first = next(outcomes)
    procs = [w.proc for w in workers.workers]
    outcomes.close()   # grade-all stopped: an error, Ctrl-C
    assert first.results == {"score": 1, "tests": []} and len(procs) == 2
    assert all(p.poll() is not None for p in procs) and workers.workers == []
