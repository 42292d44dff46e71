"""Fuzzing the intake: zips of drawn names, kinds, sizes and damage go through ``grade``'s
extraction (autograder/core/submission.py) and grade-all's discovery, plots and similarity
readers; measurements.json of drawn shapes, numbers, keys, nesting and encodings goes through
the schema and every task 5 check. Each input is answered (graded, or one line naming the file
and the problem), never a traceback or "the grader could not interpret your result"."""
from __future__ import annotations

import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.classdata import discover
from autograder.core import course, submission
from autograder.grading.checkrun import run_check
from autograder.grading.context import GradingContext
from autograder.grading.grade import handed_in, load_checks
from autograder.lessons.why17 import measurements, plotdata
from autograder.lessons.why17.fixtures import classes, intake
from autograder.similarity import compare

ASG = course.load().assignment("why17")
EXPECTED = handed_in(ASG)
FUZZ = settings(derandomize=True, deadline=None, max_examples=120,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# --------------------------------------------------------------------------- zips

part = st.one_of(
    st.sampled_from(["bw.py", "predict.py", "measurements.json", "why17", "..", ".", "", "__MACOSX",
                     "a" * 255, "b" * 256, "c" * 300, "C:", "x\\y", "\n", "\x7f", "é", "²", "ﬁ"]),
    st.text(min_size=0, max_size=12),
)
name = st.lists(part, min_size=1, max_size=4).map("/".join).filter(lambda n: "\x00" not in n)
entry = st.tuples(name, st.sampled_from(["file", "dir", "link"]), st.integers(0, 3000))
damage = st.sampled_from(["none", "truncate", "garbage_tail", "flip", "flip_head"])
#: Every compression method zipfile reads; damage then meets each decompressor's own errors.
method = st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
#: Where a flipped byte lands, as a fraction of the zip's length.
where = st.floats(0.0, 0.999)


def write_zip(path, entries, how, compression=zipfile.ZIP_DEFLATED, at=0.5) -> None:
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for n, kind, size in entries:
            info = zipfile.ZipInfo(n.rstrip("/") + "/" if kind == "dir" else n)
            if kind == "link":
                info.external_attr = (0o120777 << 16)
            zf.writestr(info, b"" if kind == "dir" else b"x" * size)
    data = bytearray(path.read_bytes())
    if how == "truncate":
        data = data[: len(data) * 2 // 3]
    elif how == "garbage_tail":
        data += b"PK\x05\x06" + b"\xff" * 30
    elif how == "flip" and len(data) > 40:
        data[int(len(data) * at)] ^= 0xFF
    elif how == "flip_head" and entries:   # the first bytes of the first entry's data: a stream's header
        name_len, extra_len = int.from_bytes(data[26:28], "little"), int.from_bytes(data[28:30], "little")
        start = 30 + name_len + extra_len
        if start + 9 < len(data):
            data[start + int(9 * at)] ^= 0xFF
    path.write_bytes(bytes(data))


def one_line(text: str, path) -> None:
    assert "\n" not in text and "Traceback" not in text, text
    assert len(text) < 600, text


@pytest.mark.slow
@FUZZ
@given(entries=st.lists(entry, min_size=0, max_size=6), how=damage, compression=method, at=where)
def test_any_zip_is_graded_or_refused_in_one_line(tmp_path_factory, entries, how, compression, at):
    folder = tmp_path_factory.mktemp("zip")
    path = folder / "sub.zip"
    with_warnings_off(write_zip, path, entries, how, compression, at)
    try:
        with submission.load(path, EXPECTED) as sub:
            assert all((sub.folder / f).is_file() for f in sub.files)
    except submission.SubmissionError as exc:
        one_line(str(exc), path)
        assert str(exc).startswith(f"{path}: "), exc
    problem = discover.problem_of(path, discover.gradable_names(ASG))
    assert problem is None or problem.startswith("nothing to grade: "), problem
    if problem:
        one_line(problem, path)
    plotdata.read_measurements(path, measurements.MAX_BYTES)
    compare.code_files(discover.Submission(student="s", path=path, members=()), compare.python_names(ASG))


@FUZZ
@given(compression=method, in_directory=st.booleans(), offset=st.integers(0, 45), xor=st.integers(1, 255))
def test_any_damage_to_one_entry_is_graded_or_one_line(tmp_path_factory, compression, in_directory, offset, xor):
    """The work in a zip whose bw.py (compressed with each method) has one byte changed: in its
    data (a stream's header, its first block) or in its central directory record (method, flags,
    CRC, sizes, name length, offset)."""
    def damage(raw, data_at, central_at):
        raw[(central_at if in_directory else data_at) + offset] ^= xor

    path = intake._damaged(tmp_path_factory.mktemp("entry"), "sub", compression, damage)
    try:
        with submission.load(path, EXPECTED) as sub:
            assert all((sub.folder / f).is_file() for f in sub.files)
    except submission.SubmissionError as exc:
        one_line(str(exc), path)
        assert str(exc).startswith(f"{path}: "), exc
    problem = discover.problem_of(path, discover.gradable_names(ASG))
    assert problem is None or (problem.startswith("nothing to grade: ") and "\n" not in problem), problem
    plotdata.read_measurements(path, measurements.MAX_BYTES)
    compare.code_files(discover.Submission(student="s", path=path, members=()), compare.python_names(ASG))


def with_warnings_off(fn, *args):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # zipfile warns of the duplicate names drawn on purpose
        return fn(*args)


# --------------------------------------------------------------------------- measurements.json

MEASURE = [c for c in load_checks(ASG).values() if c.task == "task5" and c.id.startswith("measure_")]
VALID = json.loads(classes.measurements_json())
PATHS = [("schema",), ("device",), ("device", "name"), ("device", "key"), ("device", "type"), ("bw_gbs",),
         ("peak_tflops",), ("ridge_flops_per_byte",), ("sweep_gbs_by_mib",), ("rows",), ("rows", 0),
         ("rows", 0, "params_read"), ("rows", 0, "model"), ("rows", 0, "pct_of_ceiling"),
         ("rows", 0, "measured_tok_s")]
number = st.one_of(st.integers(), st.integers(10**300, 10**420), st.integers(-(10**420), -(10**300)),
                   st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, -1, 1e-320, 1e308]))
key = st.one_of(st.text(max_size=8), st.text(alphabet="0123456789²³¹٣੩๒", min_size=1, max_size=12),
                st.sampled_from(["0", "-1", "1" * 20, "08", " 8"]))
json_value = st.recursive(st.none() | st.booleans() | number | st.text(max_size=20),
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(key, inner, max_size=4),
                          max_leaves=12)


def replaced(doc, path, value):
    doc = json.loads(json.dumps(doc))
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return doc


def as_bytes(doc, encoding: str) -> bytes:
    text = json.dumps(doc, ensure_ascii=False)
    return text.encode(encoding, "replace") if encoding != "raw" else text.encode("utf-8")


documents = st.one_of(
    st.builds(replaced, st.just(VALID), st.sampled_from(PATHS), json_value).flatmap(
        lambda d: st.builds(as_bytes, st.just(d), st.sampled_from(["raw", "utf-8", "utf-16", "latin-1"]))),
    st.builds(lambda d, k, v: as_bytes(replaced(VALID, ("sweep_gbs_by_mib",), {k: v}), "raw"), st.just(0), key,
              number),
    json_value.map(lambda v: json.dumps(v).encode()),
    st.integers(1, 200_000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 200_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.binary(max_size=200),
)


class Folder:
    """A submission folder that holds one measurements.json; GradingContext's own reader reads it."""

    def __init__(self, path):
        self.submission_dir = path

    read_file = GradingContext.read_file


@FUZZ
@given(data=documents)
def test_any_measurements_json_gets_task5s_answer(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("m")
    (folder / measurements.FILENAME).write_bytes(data)
    try:
        measurements.parse(data)
    except measurements.MeasurementsError as exc:
        one_line(str(exc), folder)
        assert str(exc).startswith(measurements.FILENAME), exc
    ctx = Folder(folder)
    for check in MEASURE:
        passed, message = run_check(ctx, check)
        one_line(message, folder)
        assert "could not interpret" not in message, (check.id, message)
    plotdata.read_measurements(folder, measurements.MAX_BYTES)
