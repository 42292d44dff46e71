"""A damaged output folder heals, through the real grade-all command (autograder/classdata/store.py).

A student's results.json cut short, emptied, not a JSON object, or replaced by a folder is
regraded with one warning line, never counted as graded; the class files always hold every
student; an --out that cannot be written is one line and exit 2; a student folder that cannot be
written costs a warning and exit 1, and the class files still hold everyone; a full disk stops the
grading with one line and exit 1. Read-only is chmod for a normal user and a read-only bind mount
for root; the full disk is a 12 KiB tmpfs, root only; each skips where the machine refuses it.

The class is three students of the tiny course (tests/fixtures/tiny_course), graded once; each
test damages a copy of that output. alice and bob hand in the same file, so a regraded alice must
get bob's row.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.tiny_course import ROOT, cli, copy_of_tiny

#: Slow, left out of `make check`: every test regrades a damaged class through the real grade-all.
pytestmark = pytest.mark.slow

#: Columns that differ between two students graded alike.
PER_STUDENT = ("student", "name", "graded_at")


def rows(out: Path) -> dict[str, dict]:
    """gradebook.csv's rows by student, without the columns that name or date them."""
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        return {r["student"]: {k: v for k, v in r.items() if k not in PER_STUDENT} for r in csv.DictReader(f)}


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(the class, its OUT, the options of every run): alice and bob hand in the same double.py,
    carol the squaring mistake."""
    base = tmp_path_factory.mktemp("heal")
    tiny = copy_of_tiny(base)
    for student, source in (("alice", "good_adds"), ("bob", "good_adds"), ("carol", "wrong_squares")):
        shutil.copytree(tiny / "submissions" / source, base / "class" / student)
    options = ("--course", tiny, "--assignment", "tiny", "--jobs", "1")
    proc = cli("grade-all", base / "class", "--out", base / "out", *options)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(rows(base / "out")) == ["alice", "bob", "carol"]
    assert rows(base / "out")["alice"] == rows(base / "out")["bob"]
    return base / "class", base / "out", options


@pytest.fixture
def out(graded, tmp_path) -> Path:
    """A copy of the graded class's OUT, to damage."""
    copy = tmp_path / "out"
    shutil.copytree(graded[1], copy)
    (copy / ".grade-all.lock").unlink(missing_ok=True)
    return copy


def regrade(graded, out: Path, *extra) -> subprocess.CompletedProcess:
    klass, _, options = graded
    return cli("grade-all", klass, "--out", out, *options, *extra)


def assert_everyone_exported(out: Path) -> None:
    found = rows(out)
    assert sorted(found) == ["alice", "bob", "carol"]
    assert found["alice"] == found["bob"]
    with open(out / "canvas.csv", newline="", encoding="utf-8") as f:
        assert len(list(csv.reader(f))) == 2 + 3
    assert json.loads((out / "summary.json").read_text())["students"] == 3


@pytest.mark.parametrize("damage, said", [
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "does not parse"),
    (lambda p: p.write_bytes(b""), "does not parse"),
    (lambda p: p.write_text("[1, 2]\n"), "is not a JSON object"),
    (lambda p: p.unlink(), "is missing"),
], ids=["cut-short", "empty", "a-list", "missing"])
def test_a_results_json_that_cannot_be_read_is_regraded_with_one_warning(graded, out, damage, said):
    damage(out / "alice" / "results.json")
    proc = regrade(graded, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert warnings(proc.stderr) == [f"warning: alice: {out / 'alice' / 'results.json'} {said}"
                                     + (" (cut short?)" if said == "does not parse" else "") + "; regrading"]
    assert "skipping 2 already graded" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads((out / "alice" / "results.json").read_text())["max_score"] == 10
    assert_everyone_exported(out)


def test_a_results_json_that_is_a_folder_is_moved_aside_and_regraded(graded, out):
    folder = out / "bob" / "results.json"
    folder.unlink()
    folder.mkdir()
    (folder / "kept.txt").write_text("whatever was here")
    proc = regrade(graded, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert warnings(proc.stderr) == [f"warning: bob: {folder} is a folder, not a file "
                                     "(moved aside: results.json.damaged); regrading"]
    assert "Traceback" not in proc.stderr
    assert (out / "bob" / "results.json.damaged" / "kept.txt").read_text() == "whatever was here"
    assert json.loads(folder.read_text())["max_score"] == 10
    assert_everyone_exported(out)


def test_a_damaged_student_is_regraded_beside_a_student_run(graded, out):
    (out / "alice" / "results.json").write_text('{"score": 1')
    proc = regrade(graded, out, "--student", "carol")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [w.split(":")[1].strip() for w in warnings(proc.stderr)] == ["alice"]
    assert "2/2" in proc.stderr            # carol as asked, alice because she was damaged
    assert_everyone_exported(out)


def test_an_out_that_is_a_file_is_one_line_and_exit_2(graded, tmp_path):
    path = tmp_path / "grades"
    path.write_text("not a folder")
    proc = regrade(graded, path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"error: {path}: not a folder (--out names a file)"]
    assert path.read_text() == "not a folder"


# ------------------------------------------------------------------ read-only folders


def _can_mount_read_only() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp"],
                           capture_output=True, check=False)
    return probe.returncode == 0


def in_mount_namespace(mount: str, folder: Path, graded, out: Path, *extra) -> subprocess.CompletedProcess:
    """grade-all as ``regrade`` runs it, in a mount namespace of its own (util-linux's unshare, as
    root) where the shell command ``mount`` has first been run with ``$0`` = ``folder``."""
    if os.geteuid() != 0 or not _can_mount_read_only():
        pytest.skip("needs root and unshare's mount namespaces")
    klass, _, options = graded
    command = [sys.executable, "-m", "autograder", "grade-all", klass, "--out", out, *options, *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', str(folder), *map(str, command)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def run_with_read_only(folder: Path, graded, out: Path, *extra) -> subprocess.CompletedProcess:
    """grade-all as ``regrade`` runs it, with ``folder`` read-only for it: ``chmod a-w`` for a
    normal user; for root, whom permissions do not stop, a read-only bind mount in a mount
    namespace of the command's own (skipped where that is refused)."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            return regrade(graded, out, *extra)
        finally:
            folder.chmod(mode)
    return in_mount_namespace('mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"', folder, graded, out,
                              *extra)


def test_a_read_only_out_is_one_line_naming_it_and_exit_2(graded, out):
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    proc = run_with_read_only(out, graded, out, "--force")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {out}: cannot write in this --out folder (")
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_a_student_folder_that_cannot_be_written_still_gets_a_row_and_exit_1(graded, out):
    proc = run_with_read_only(out / "alice", graded, out, "--force")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    said = warnings(proc.stderr)
    assert len(said) == 1 and said[0].startswith(f"warning: alice: cannot save in {out / 'alice'} (")
    assert proc.stderr.rstrip().splitlines()[-1].startswith("error: 1 student(s) graded but not saved")
    assert_everyone_exported(out)


def test_a_full_disk_stops_grading_with_one_line_and_exit_1(graded, tmp_path):
    out = tmp_path / "full"
    out.mkdir()
    # 12 KiB of tmpfs (three 4 KiB pages): room for one student's three files, not a second's
    proc = in_mount_namespace('mount -t tmpfs -o size=12k tmpfs "$0"', out, graded, out)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors[0] == f"error: cannot write in {out}: No space left on device; grading stopped"
    assert len(errors) <= 2   # the class files, when they do not fit either: one more line
