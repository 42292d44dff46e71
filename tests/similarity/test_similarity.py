"""The similarity report on a constructed class of 20: a copy with every local name renamed and
its comments gone ranks first; two solutions written independently rank low; stubs and public
tests (boilerplate) never count; the report is the same on every run (copydetect hashes with
Python's salted hash(), which window 1 makes harmless)."""
from __future__ import annotations

import ast
import csv
import statistics
import subprocess
import sys
import zipfile

import pytest

from autograder.core import course
from autograder.similarity import clusters, compare, dictated
from tests.helpers.paths import ROOT
from tests.similarity.classes import (
    DOCSTRING_PREDICT,
    INDEPENDENT,
    MODULES,
    SOLUTION,
    STUBS,
    make_ring_class,
    make_similarity_class,
    renamed,
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("similar")
    make_similarity_class(base / "class")
    proc = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(base / "class"),
                           "--out", str(base / "out")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pairs = list(csv.DictReader((base / "out" / "pairs.csv").open()))
    return base, pairs, proc


def test_the_renamed_copy_really_renames_and_still_compiles():
    source = INDEPENDENT["bw.py"].read_text()
    copy = renamed(source)
    assert copy != source and "my_" in copy and "#" not in copy.split('"""')[-1]
    assert {n.id for n in ast.walk(ast.parse(copy)) if isinstance(n, ast.Name)} != {
        n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


@pytest.mark.slow
def test_disguised_copy_ranks_first_in_a_class_of_20(report):
    _, pairs, proc = report
    assert len(pairs) == 20 * 19 // 2     # every pair of the 20 (each holds code beyond the stubs)
    first = pairs[0]
    assert {first["student_a"], first["student_b"]} == {"copy", "orig"} and first["rank"] == "1"
    assert float(first["similarity"]) > 95 > float(pairs[1]["similarity"])
    assert "copy ~ orig" in proc.stderr or "orig ~ copy" in proc.stderr


@pytest.mark.slow
def test_independent_correct_solutions_rank_low(report):
    _, pairs, _ = report
    rank = {frozenset((p["student_a"], p["student_b"])): (int(p["rank"]), float(p["similarity"])) for p in pairs}
    for other in ("orig", "copy"):
        position, similarity = rank[frozenset((other, "ref"))]
        assert similarity < 20 and position > len(pairs) // 2, (other, position, similarity)


@pytest.mark.slow
def test_boilerplate_never_counts(tmp_path):
    """Two students who handed in the untouched stubs share everything, and none of it counts."""
    asg = course.load().assignment("why17")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for f in MODULES:
            (tmp_path / name / f).write_text((STUBS / f).read_text())
    from autograder.classdata.discover import discover
    layout = discover(tmp_path, asg)
    assert compare.fingerprints(layout.submissions, asg) == {}
    # and the same stubs with one real function added compare on that function only
    (tmp_path / "a" / "predict.py").write_text((STUBS / "predict.py").read_text() + "\n\ndef extra(x):\n"
                                               "    total = sum(v * v for v in x) / len(x)\n    return total\n")
    (tmp_path / "b" / "predict.py").write_text((STUBS / "predict.py").read_text() + "\n\ndef extra(y):\n"
                                               "    total = sum(w * w for w in y) / len(y)\n    return total\n")
    prints = compare.fingerprints(discover(tmp_path, asg).submissions, asg)
    (pair,) = compare.rank(prints)
    assert [m.name for m in pair.files] == ["predict.py"] and pair.similarity > 0.9


@pytest.mark.slow
def test_report_says_it_is_evidence_not_a_verdict_and_shows_regions(report):
    base, pairs, _ = report
    html = (base / "out" / "report.html").read_text()
    assert "evidence for a person to look at, not a verdict" in html
    assert html.count("<mark>") > 10 and "copy ~ orig" in html.replace("orig ~ copy", "copy ~ orig")
    assert "http://" not in html and "https://" not in html


@pytest.mark.slow
def test_same_class_same_report(report, tmp_path):
    base, pairs, _ = report
    again = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(base / "class"),
                            "--out", str(tmp_path / "again")], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0
    assert (tmp_path / "again" / "pairs.csv").read_text() == (base / "out" / "pairs.csv").read_text()


def test_bad_usage_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "o")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "no such folder" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_grade_all_similarity_option_writes_the_report_beside_the_grades(tmp_path):
    make_similarity_class(tmp_path / "class")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(tmp_path / "class"),
                           "--out", str(tmp_path / "out"), "--jobs", "1", "--checks", "measure_file",
                           "--similarity"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pairs = list(csv.DictReader((tmp_path / "out" / "similarity" / "pairs.csv").open()))
    assert {pairs[0]["student_a"], pairs[0]["student_b"]} == {"copy", "orig"}
    assert (tmp_path / "out" / "similarity" / "report.html").is_file()
    assert (tmp_path / "out" / "copy" / "results.json").is_file()   # graded as well


def test_code_is_read_from_zips_and_folders_one_level_deep(tmp_path):
    asg = course.load().assignment("why17")
    path = tmp_path / "zoe.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("why17/predict.py", "x = 1\n")
        zf.writestr("__MACOSX/why17/._predict.py", "junk")
        zf.writestr("why17/.ipynb_checkpoints/bw.py", "y = 2\n")
        zf.writestr("notes.txt", "hi")
    from autograder.classdata.discover import Member, Submission
    sub = Submission(student="zoe", path=path, members=(Member("zoe"),))
    assert compare.code_files(sub, compare.python_names(asg)) == {"predict.py": "x = 1\n"}


def test_a_damaged_zip_entry_is_skipped_not_a_crash(tmp_path):
    """Every damage zipfile can meet (LZMA, bzip2, deflate, an unknown method, encryption, a bad
    CRC) leaves that file out of the comparison; the other files of the zip are still read."""
    asg = course.load().assignment("why17")
    from autograder.classdata.discover import Member, Submission
    from autograder.lessons.why17.fixtures import intake
    for build in (intake.lzma_damaged, intake.bzip2_damaged, intake.deflate_damaged, intake.unknown_method,
                  intake.encrypted_entry, intake.bad_crc):
        path = build(tmp_path)
        sub = Submission(student="zoe", path=path, members=(Member("zoe"),))
        files = compare.code_files(sub, compare.python_names(asg))
        assert "bw.py" not in files and "predict.py" in files, build.__name__


# --------------------------------------------------------------------------- baseline and clusters

@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    base = tmp_path_factory.mktemp("ring")
    make_ring_class(base / "class")
    proc = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(base / "class"),
                           "--out", str(base / "out")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pairs = {frozenset((p["student_a"], p["student_b"])): p
             for p in csv.DictReader((base / "out" / "pairs.csv").open())}
    return base, pairs, proc


@pytest.mark.slow
def test_two_solutions_written_apart_from_the_stubs_are_no_longer_near_copies(ring):
    _, pairs, _ = ring
    pair = pairs[frozenset(("doc", "ref"))]
    assert float(pair["similarity"]) < 30 and pair["cluster"] == ""
    # the same two files with only the stubs discounted (not the code they dictate) look alike
    asg = course.load().assignment("why17")
    stubs_only = frozenset().union(*(compare._fingerprint(p.name, p.read_text()).hashes
                                     for p in compare.boilerplate_files(asg)))
    before = compare.compare_pair(
        "doc", "ref", compare.fingerprint_texts({"predict.py": DOCSTRING_PREDICT.read_text()}, stubs_only),
        compare.fingerprint_texts({"predict.py": (SOLUTION / "predict.py").read_text()}, stubs_only))
    assert before.similarity > 0.5 > float(pair["similarity"]) / 100 + 0.2


@pytest.mark.slow
def test_a_copy_ring_of_three_is_one_cluster(ring):
    base, pairs, proc = ring
    clustered = {k: p["cluster"] for k, p in pairs.items() if p["cluster"]}
    assert set(clustered.values()) == {"C1"}
    assert set().union(*clustered) == {"ring1", "ring2", "ring3"}
    assert "1 cluster linked at 50% or more; C1: ring1, ring2, ring3" in proc.stderr
    html = (base / "out" / "report.html").read_text()
    assert "<td>C1</td><td>3</td><td>ring1, ring2, ring3</td>" in html


@pytest.mark.slow
def test_each_pair_carries_the_class_baseline(ring):
    _, pairs, proc = ring
    rows = list(pairs.values())
    median = statistics.median(float(p["similarity"]) for p in rows)
    assert {p["class_median"] for p in rows} == {f"{median:.1f}"}
    against = {}
    for p in rows:
        against.setdefault(p["student_a"], set()).add(p["a_vs_reference"])
        against.setdefault(p["student_b"], set()).add(p["b_vs_reference"])
    assert all(len(v) == 1 for v in against.values())          # one figure per student
    assert against["ref"] == {"100.0"}                          # the reference against itself
    assert float(next(iter(against["doc"]))) < 30               # written apart: low, like the class
    assert f"baseline: median pair {median:.0f}%" in proc.stderr


def test_clusters_join_through_a_shared_member():
    pairs = [compare.Pair("a", "b", 0.9), compare.Pair("b", "c", 0.6), compare.Pair("a", "c", 0.2),
             compare.Pair("d", "e", 0.55), compare.Pair("e", "f", 0.49), compare.Pair("x", "y", 0.1)]
    found = clusters.group(pairs, 0.5)
    assert [(c.name, c.students, c.highest, c.lowest) for c in found] == [
        ("C1", ["a", "b", "c"], 0.9, 0.6), ("C2", ["d", "e"], 0.55, 0.55)]
    assert clusters.group(pairs, 0.95) == []


def test_the_docstrings_return_line_is_read_as_code_only_when_it_is_code():
    assert dictated.returned("Returns:\n    bw_gbs * 1e9 / (p * b), in tokens/s.\n") == "bw_gbs * 1e9 / (p * b)"
    assert dictated.returned("Returns:\n    (1 / step time, batch / step time), both in tokens/s.") is None
    assert dictated.returned("Tokens per second.") is None


def test_a_bad_cluster_threshold_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(tmp_path), "--out",
                           str(tmp_path / "o"), "--cluster-at", "150"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "--cluster-at 150" in proc.stderr and "Traceback" not in proc.stderr
