"""Loading a submission: folders and zips copied into a private folder; unsafe ones refused with
one line (exit 2 on the command line)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import zipfile

import pytest

from autograder.core import submission
from autograder.core.course import ROOT
from autograder.core.submission import SubmissionError


def _zip(path, entries: dict[str, bytes], *, symlink: str | None = None):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def test_folder_is_copied_without_clutter(tmp_path):
    src = tmp_path / "sub"
    (src / "__pycache__").mkdir(parents=True)
    (src / "predict.py").write_text("x = 1\n")
    (src / "predict.pyc").write_bytes(b"\0")
    (src / "__pycache__" / "predict.cpython-311.pyc").write_bytes(b"\0")
    (src / ".DS_Store").write_bytes(b"\0")
    with submission.load(src) as sub:
        assert sub.files == ("predict.py",)
        assert sub.folder != src and (sub.folder / "predict.py").read_text() == "x = 1\n"
        folder = sub.folder
    assert not folder.exists()


def test_zip_with_a_top_folder_is_unwrapped_and_seeded_by_content(tmp_path):
    a = _zip(tmp_path / "a.zip", {"why17/predict.py": b"x = 1\n", "__MACOSX/why17/._predict.py": b"junk"})
    b = _zip(tmp_path / "b.zip", {"predict.py": b"x = 1\n"})
    c = _zip(tmp_path / "c.zip", {"predict.py": b"x = 2\n"})
    with submission.load(a) as sa, submission.load(b) as sb, submission.load(c) as sc:
        assert sa.files == sb.files == ("predict.py",)
        assert sa.seed == sb.seed != sc.seed


@pytest.mark.parametrize("entries, symlink, words", [
    ({"../evil.py": b"x"}, None, "climbs out with '..'"),
    ({"ok/../../evil.py": b"x"}, None, "climbs out with '..'"),
    ({"/etc/cron.d/evil": b"x"}, None, "absolute path"),
    ({"predict.py": b"x"}, "link.py", "is a symlink"),
    ({f"f{i}.py": b"" for i in range(submission.MAX_FILES + 1)}, None, "more than"),
    ({"big.bin": b"\0" * (submission.MAX_FILE_BYTES + 1)}, None, "larger than"),
])
def test_unsafe_zips_are_refused_with_one_line(tmp_path, entries, symlink, words):
    archive = _zip(tmp_path / "s.zip", entries, symlink=symlink)
    with pytest.raises(SubmissionError) as info:
        submission.load(archive)
    assert words in str(info.value) and str(archive) in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "evil.py").exists()


def test_a_zip_bomb_is_refused_before_it_is_written(tmp_path):
    per_file = submission.MAX_TOTAL_BYTES // 4
    archive = _zip(tmp_path / "bomb.zip", {f"z{i}.bin": b"\0" * per_file for i in range(5)})
    assert archive.stat().st_size < 1_000_000
    with pytest.raises(SubmissionError, match="in total"):
        submission.load(archive)


def test_symlink_in_a_folder_is_refused(tmp_path):
    src = tmp_path / "sub"
    src.mkdir()
    os.symlink("/etc/passwd", src / "predict.py")
    with pytest.raises(SubmissionError, match="is a symlink"):
        submission.load(src)


@pytest.mark.slow
@pytest.mark.parametrize("make, words", [
    (lambda p: p / "nope", "no such file or folder"),
    (lambda p: (p / "x.zip").write_bytes(b"PK not really") and p / "x.zip", "unreadable zip"),
    (lambda p: (p / "x.txt").write_text("hi") and p / "x.txt", "not a folder or a .zip"),
])
def test_command_line_refuses_with_exit_2_and_one_line(tmp_path, make, words):
    target = make(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(target), "--out", str(tmp_path / "r.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "r.json").exists()


EXPECTED = ("bw.py", "flops.py", "predict.py", "roofline.py", "measurements.json", "why17.ipynb")


def test_the_whole_bundle_zipped_is_graded_from_the_folder_holding_the_files(tmp_path):
    archive = _zip(tmp_path / "bundle.zip", {
        "why17-student/README.md": b"# the course\n",
        "why17-student/course.yml": b"course: x\n",
        "why17-student/shared/tables.py": b"x = 1\n",
        "why17-student/assignments/why17/predict.py": b"x = 1\n",
        "why17-student/assignments/why17/bw.py": b"y = 2\n",
        "why17-student/assignments/why17/tests/test_predict.py": b"z = 3\n",
        "why17-student/assignments/why17/.hypothesis/examples/ab/cd": b"cache",
        "why17-student/assignments/why17/.ipynb_checkpoints/why17-checkpoint.ipynb": b"{}",
        "why17-student/assignments/why17/__pycache__/predict.cpython-311.pyc": b"\0",
        "__MACOSX/why17-student/assignments/why17/._predict.py": b"junk",
    })
    with submission.load(archive, expected=EXPECTED) as sub:
        assert sub.found_in == "why17-student/assignments/why17"
        assert sub.files == ("bw.py", "predict.py", "tests/test_predict.py")
        assert (sub.folder / "predict.py").read_text() == "x = 1\n"


def test_files_at_the_top_win_over_a_copy_deeper_down(tmp_path):
    src = tmp_path / "sub"
    (src / "old" / "why17").mkdir(parents=True)
    (src / "predict.py").write_text("x = 1\n")
    for name in ("bw.py", "flops.py", "predict.py"):
        (src / "old" / "why17" / name).write_text("x = 0\n")
    (src / ".hypothesis").mkdir()
    (src / ".hypothesis" / "db").write_text("cache")
    with submission.load(src, expected=EXPECTED) as sub:
        assert sub.found_in == "" and "predict.py" in sub.files
        assert not any(".hypothesis" in f for f in sub.files)


@pytest.mark.slow
def test_a_folder_named_like_the_assignment_is_found_and_the_output_says_where(tmp_path):
    from autograder.grading.grade import grade_submission

    archive = _zip(tmp_path / "s.zip", {
        "notes.txt": b"my notes\n",
        "why17/predict.py": (ROOT / "solutions" / "why17" / "predict.py").read_bytes(),
        "why17/.hypothesis/x": b"cache",
    })
    results = grade_submission(archive, device="cpu", only={"kv_bytes_gqa"})
    assert [t["status"] for t in results["tests"]] == ["passed"]
    assert "Your files were found in why17/ inside the submission" in results["output"]
    assert "Files graded: predict.py." in results["output"]
