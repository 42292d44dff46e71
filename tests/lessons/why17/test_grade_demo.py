"""The sample class of `make demo`: who is in it, and the score table read back from results."""
from __future__ import annotations

import json

from autograder.lessons.why17.fixtures import demo_class


def test_sample_class_holds_reference_stubs_and_mistakes(tmp_path):
    names = demo_class.build_class(tmp_path / "class")
    assert set(names) == {"reference", "untouched-stubs", *demo_class.MISTAKES}
    assert (tmp_path / "class" / "reference" / "measurements.json").is_file()
    assert not (tmp_path / "class" / "untouched-stubs" / "measurements.json").exists()
    for student, wrong in demo_class.MISTAKES.items():
        for file, text in demo_class.build.changed_files("wrong", wrong).items():
            assert (tmp_path / "class" / student / file).read_text() == text
            assert text != (demo_class.build.REFERENCE / file).read_text()


def test_table_has_a_row_per_student_with_task_totals(tmp_path):
    for name, scores in (("amy", (25.0, 0.0)), ("bob", (12.5, 15.0))):
        tests = [{"task": "task1", "check": "a", "score": scores[0], "max_score": 25.0,
                  "status": "passed" if scores[0] == 25 else "failed"},
                 {"task": "task2", "check": "b", "score": scores[1], "max_score": 15.0,
                  "status": "passed" if scores[1] == 15 else "failed"}]
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(
            {"score": sum(scores), "max_score": 40.0, "tests": tests}))
    lines = demo_class.table(tmp_path).splitlines()
    assert lines[0].split()[:4] == ["student", "task1", "task2", "total"]
    amy, bob = lines[2], lines[3]
    assert amy.split()[:4] == ["amy", "25.0", "0.0", "25.0/40"] and amy.endswith("b")
    assert bob.split()[:4] == ["bob", "12.5", "15.0", "27.5/40"] and bob.endswith("a")
