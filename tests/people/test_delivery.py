"""``feedback-zip``: the feedback pages packed as Canvas and Moodle take them in bulk, checked
against the way each LMS reads the names (Canvas: the first two all-digit ``_`` parts of a file's
name, app/models/assignment.rb; Moodle: ``<name>_<participant id>_<plugin type>_<plugin name>``
in a path part, mod/assign/feedback/file/importziplib.php), on real downloads of the tiny course."""
from __future__ import annotations

import re
import zipfile

import pytest

from autograder.classdata import discover, lms
from autograder.core.errors import UsageError
from autograder.people import delivery
from tests.batch import lms_layouts
from tests.helpers.tiny_course import TINY, cli
from tests.people import classes


def _graded(tmp_path, make):
    root, out = tmp_path / "download", tmp_path / "out"
    make(root)
    asg = classes.tiny_asg()
    layout = discover.discover(root, asg)
    classes.write_out(out, layout, asg, {s.student: 10.0 for s in layout.submissions})
    return root, out, layout, asg


def _canvas_reads(name: str) -> tuple[str, str] | None:
    """(user id, attachment id) as Canvas reads a feedback file's name, or None."""
    ids = [part for part in name.rsplit("/", 1)[-1].split("_") if re.fullmatch(r"\d+", part)]
    return (ids[0], ids[1]) if len(ids) >= 2 else None


def _moodle_reads(path: str) -> tuple[str, str, str] | None:
    """(participant id, plugin type, plugin name) as Moodle reads a path in the zip, or None."""
    for part in path.split("/"):
        info = part.split("_", 4)
        if len(info) >= 4 and info[1].isdigit():
            return info[1], info[2], info[3]
    return None


def test_a_canvas_zip_names_each_page_by_user_and_submitted_attachment(tmp_path):
    root, out, layout, asg = _graded(tmp_path, lms_layouts.canvas)
    packed = delivery.pack(out, layout, root, asg)
    assert packed.path == out / "feedback-canvas.zip"
    with zipfile.ZipFile(packed.path) as zf:
        names = zf.namelist()
        read = {_canvas_reads(n): zf.read(n) for n in names}
    submitted = {(m["uid"], m["att"]) for m in (lms.CANVAS.match(p.name) for p in root.iterdir()) if m}
    assert set(read) <= submitted                                   # every page reaches a submission
    assert {uid for uid, _ in read} == {"1001", "1002", "1003"}
    assert read[("1003", "5003")] == (out / "hoppergrace" / "feedback.html").read_bytes()
    assert packed.notes == ["anon_x7k2q: no Canvas user id in the download's names (anonymized?), so "
                            "Canvas could not match a feedback file; left out"]


@pytest.mark.parametrize("make", [lms_layouts.moodle, lms_layouts.moodle_flat])
def test_a_moodle_zip_has_a_folder_per_student_named_as_the_download(tmp_path, make):
    root, out, layout, asg = _graded(tmp_path, make)
    packed = delivery.pack(out, layout, root, asg)
    with zipfile.ZipFile(packed.path) as zf:
        read = {_moodle_reads(n): (n, zf.read(n)) for n in zf.namelist()}
    ids = {sub.members[0].lms_id: sub.student for sub in layout.submissions}
    assert {pid for pid, _, _ in read} == set(ids)
    for (pid, kind, plugin), (name, data) in read.items():
        assert (kind, plugin) == ("assignsubmission", "file")
        assert data == (out / ids[pid] / "feedback.html").read_bytes()
        assert name.endswith("/tiny-feedback.html")
    assert "Ada Lovelace_12345_assignsubmission_file_/tiny-feedback.html" in {n for n, _ in read.values()}


def test_the_same_pages_give_the_same_zip_and_a_missing_page_is_a_note(tmp_path):
    root, out, layout, asg = _graded(tmp_path, lms_layouts.moodle)
    first = delivery.pack(out, layout, root, asg).path.read_bytes()
    assert delivery.pack(out, layout, root, asg).path.read_bytes() == first
    (out / "Grace_Hopper_12348" / "feedback.html").unlink()
    packed = delivery.pack(out, layout, root, asg)
    assert packed.notes == [f"Grace_Hopper_12348: no feedback.html in {out} (not graded yet); left out"]
    assert len(packed.names) == 3


def test_a_folder_per_student_class_is_refused_in_one_line(tmp_path):
    root, out, layout, asg = _graded(tmp_path, lambda r: (r / "ann").mkdir(parents=True))
    with pytest.raises(UsageError, match="a folders layout; feedback zips are for Canvas and Moodle"):
        delivery.pack(out, layout, root, asg)


def test_the_command_writes_the_zip_and_exits_1_when_a_student_is_left_out(tmp_path):
    root, out, _, _ = _graded(tmp_path, lms_layouts.canvas)
    proc = cli("--course", TINY, "feedback-zip", root, "--out", out)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.strip() == f"feedback-zip: 3 page(s) for Canvas in {out / 'feedback-canvas.zip'}"
    assert proc.stderr.strip().splitlines() == [
        "warning: anon_x7k2q: no Canvas user id in the download's names (anonymized?), so Canvas could "
        "not match a feedback file; left out"]
    empty = tmp_path / "empty-out"
    proc = cli("--course", TINY, "feedback-zip", root, "--out", empty)
    assert proc.returncode == 2 and "no feedback page to pack" in proc.stderr and "Traceback" not in proc.stderr
