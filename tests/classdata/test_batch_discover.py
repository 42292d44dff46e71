"""Which input layout grade-all finds, the submissions in it, and the zeros with a reason."""
from __future__ import annotations

import zipfile

import pytest

from autograder.classdata import discover
from autograder.core import course
from autograder.core.errors import UsageError


@pytest.fixture(scope="module")
def asg():
    return course.load().assignment("why17")


def _student(folder, *files):
    folder.mkdir(parents=True)
    for name in files:
        (folder / name).write_text("# work\n")
    return folder


def _zip(path, members: dict):
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def test_folders_and_zips_per_student(tmp_path, asg):
    _student(tmp_path / "alice", "bw.py")
    _zip(tmp_path / "bob.zip", {"why17/predict.py": "x = 1\n"})
    (tmp_path / "syllabus.pdf").write_text("not a submission")
    (tmp_path / ".DS_Store").write_text("")
    layout = discover.discover(tmp_path, asg)
    assert layout.kind == "folders"
    assert [s.student for s in layout.submissions] == ["alice", "bob"]
    assert [s.kind for s in layout.submissions] == ["folder", "zip"]
    assert all(s.problem is None for s in layout.submissions)
    assert layout.notes == ("syllabus.pdf: skipped (not a folder or a .zip)",)


def test_nothing_gradable_is_a_student_with_a_reason_not_a_stop(tmp_path, asg):
    (tmp_path / "empty").mkdir()
    _student(tmp_path / "notes", "notes.txt")
    (tmp_path / "broken.zip").write_bytes(b"PK not a zip")
    _zip(tmp_path / "pictures.zip", {"cat.png": "meow"})
    _student(tmp_path / "ok", "measurements.json")
    _zip(tmp_path / "deep.zip", {"a/b/c/d/e/f/g/h/i/why17/bw.py": "x = 1\n"})   # not empty: too deep
    problems = {s.student: s.problem for s in discover.discover(tmp_path, asg).submissions}
    assert problems["deep"] == ("nothing to grade: deep.zip holds its files more than 8 folders deep "
                                "(a/b/c/d/e/f/g/h/i/why17/bw.py)")
    assert problems["empty"] == "nothing to grade: the folder is empty"
    assert problems["notes"].startswith("nothing to grade: the folder holds none of bw.py")
    assert problems["broken"] == "nothing to grade: broken.zip is not a readable zip file"
    assert problems["pictures"].startswith("nothing to grade: pictures.zip holds none of")
    assert problems["ok"] is None


def test_a_name_that_does_not_print_is_escaped_in_the_one_line(tmp_path, asg):
    """Found by tests/core/test_intake_fuzz.py run with a fresh seed: a zip whose one entry is
    named "\\n" made a two-line reason."""
    _zip(tmp_path / "odd.zip", {"\n": "", "tab\there.txt": ""})
    problem = next(s.problem for s in discover.discover(tmp_path, asg).submissions)
    assert problem.endswith("(it holds \\n, tab\\there.txt)") and "\n" not in problem, problem


def test_a_zip_named_with_a_control_character_is_escaped_in_the_one_line(tmp_path, asg):
    """The zip's own name is the student's too: an escape sequence in it would drive the TA's
    terminal, a newline split the reason over two lines."""
    (tmp_path / "bad\x1b]0;x\x07\nname.zip").write_bytes(b"not a zip")
    problem = next(s.problem for s in discover.discover(tmp_path, asg).submissions)
    assert problem == "nothing to grade: bad\\x1b]0;x\\x07\\nname.zip is not a readable zip file", problem


def test_nbgrader_exchange_layout_from_the_course_folder_or_submitted(tmp_path, asg):
    sub = tmp_path / "submitted"
    _student(sub / "alice" / "why17", "bw.py", "timestamp.txt")
    _student(sub / "bob" / "ps0", "bw.py")
    for root in (tmp_path, sub):
        layout = discover.discover(root, asg)
        assert layout.kind == "nbgrader"
        by = {s.student: s for s in layout.submissions}
        assert by["alice"].path == sub / "alice" / "why17" and by["alice"].problem is None
        assert by["bob"].problem == "nothing to grade: no why17/ folder in submitted/bob/"


def test_gradescope_export_with_top_level_metadata_and_a_group(tmp_path, asg):
    _student(tmp_path / "submission_111", "bw.py")
    _student(tmp_path / "submission_222", "predict.py")
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_111:\n"
        "  :submitters:\n"
        "  - :name: Ada Lovelace\n"
        "    :sid: '1815'\n"
        "    :email: ada@example.edu\n"
        "  - :name: Charles Babbage\n"
        "    :sid: '1791'\n"
        "    :email: cb@example.edu\n"
        "submission_222:\n"
        "  :submitters:\n"
        "  - :name: Grace Hopper\n"
        "    :email: grace@example.edu\n")
    layout = discover.discover(tmp_path, asg)
    assert layout.kind == "gradescope"
    by = {s.student: s for s in layout.submissions}
    assert set(by) == {"1815", "grace@example.edu"}
    assert [m.name for m in by["1815"].members] == ["Ada Lovelace", "Charles Babbage"]
    assert by["1815"].path == tmp_path / "submission_111"


METADATA = (":submitters:\n- :name: Bea Victim\n  :sid: '777'\n  :email: bea@x.edu\n"
            "- :name: Friend\n  :sid: '888'\n")


@pytest.mark.parametrize("download", ["folders", "moodle"])
def test_a_students_own_metadata_decides_neither_the_layout_nor_who_they_are(tmp_path, asg, download):
    """Gradescope's export has its submission_metadata.yml at the top: one inside a student's own
    entry is that student's file and names nobody (nor the layout, nor a group)."""
    names = {"folders": ("eve", "ann", "bob"),
             "moodle": tuple(f"{n}_{i}_assignsubmission_file_" for i, n in
                             enumerate(("Eve Attacker", "Ann Lee", "Bob Ray"), start=100))}[download]
    for name in names:
        _student(tmp_path / name, "bw.py")
    (tmp_path / names[0] / "submission_metadata.yml").write_text(METADATA)
    layout = discover.discover(tmp_path, asg)
    assert layout.kind == download
    eve = next(s for s in layout.submissions if s.student.lower().startswith("eve"))
    assert [(m.name, m.sid, m.email) for m in eve.members] == [
        ("Eve Attacker" if download == "moodle" else "eve", "", "")]
    assert eve.problem is None
    if download == "moodle":
        assert sorted(m.lms_id for s in layout.submissions for m in s.members) == ["100", "101", "102"]


def test_in_an_export_only_the_top_metadata_names_the_submitters(tmp_path, asg):
    _student(tmp_path / "submission_1", "bw.py")
    _student(tmp_path / "submission_2", "bw.py")
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Eve\n    :sid: '1'\n"
        "submission_2:\n  :submitters:\n  - :name: Bea\n    :sid: '777'\n")
    (tmp_path / "submission_1" / "submission_metadata.yml").write_text(METADATA)
    by = {s.student: s for s in discover.discover(tmp_path, asg).submissions}
    assert set(by) == {"1", "777"}
    assert [(m.name, m.sid) for m in by["1"].members] == [("Eve", "1")]


def test_unsafe_and_clashing_names_become_distinct_safe_folders(tmp_path, asg):
    _student(tmp_path / "Zoë Smith", "bw.py")
    _student(tmp_path / "Zo_ Smith", "bw.py")
    _student(tmp_path / "..hidden", "bw.py")
    names = [s.student for s in discover.discover(tmp_path, asg).submissions]
    assert len(set(n.lower() for n in names)) == len(names) == 2   # "..hidden" starts with a dot
    assert all(discover.safe_name(n) == n and "/" not in n for n in names)


def test_a_student_named_like_a_class_file_gets_another_folder(tmp_path, asg):
    _student(tmp_path / "gradebook.csv", "bw.py")
    assert [s.student for s in discover.discover(tmp_path, asg).submissions] == ["gradebook.csv-student"]


def test_the_out_folder_inside_submissions_is_not_a_student(tmp_path, asg):
    _student(tmp_path / "alice", "bw.py")
    (tmp_path / "graded").mkdir()
    layout = discover.discover(tmp_path, asg, exclude=tmp_path / "graded")
    assert [s.student for s in layout.submissions] == ["alice"]
    assert layout.notes == ("graded: skipped (it is the --out folder)",)


def test_a_folder_and_a_zip_of_the_same_student_grade_one_and_say_so(tmp_path, asg):
    _student(tmp_path / "alice", "bw.py")
    _zip(tmp_path / "alice.zip", {"bw.py": "x"})
    layout = discover.discover(tmp_path, asg)
    assert [s.student for s in layout.submissions] == ["alice"]
    assert layout.notes == ("alice.zip: skipped; alice is graded for alice",)


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "no such folder"),
    (lambda p: (p / "file.txt").write_text("x") and p / "file.txt", "not a folder"),
    (lambda p: p, "no submissions found"),
])
def test_bad_submissions_dir_is_one_line_usage_error(tmp_path, asg, make, message):
    with pytest.raises(UsageError, match=message):
        discover.discover(make(tmp_path), asg)


def test_gradable_names_come_from_course_yml(asg):
    names = discover.gradable_names(asg)
    assert names[:4] == ("bw.py", "flops.py", "predict.py", "roofline.py")
    assert "measurements.json" in names and "why17.ipynb" in names
