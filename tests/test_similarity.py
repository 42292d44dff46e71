"""The similarity report on a constructed class of 20: a copy with every local name renamed and
its comments gone ranks first; two solutions written independently rank low; stubs and public
tests (boilerplate) never count; the report is the same on every run (copydetect hashes with
Python's salted hash(), which window 1 makes harmless)."""
from __future__ import annotations

import ast
import csv
import io
import random
import statistics
import subprocess
import sys
import tokenize
import zipfile
from pathlib import Path

import pytest

from autograder.core import course
from autograder.similarity import clusters, compare, dictated

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "why17"
STUBS = ROOT / "assignments" / "why17"
GOOD = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "good"
#: A solution written apart from the reference, in other styles (each proven correct by the grader's tests).
INDEPENDENT = {"bw.py": GOOD / "setitem_bw_mm_flops" / "bw.py",
               "flops.py": GOOD / "setitem_bw_mm_flops" / "flops.py",
               "predict.py": GOOD / "numpy_predict" / "predict.py",
               "roofline.py": GOOD / "pyplot_roofline" / "roofline.py"}
MODULES = ("bw.py", "flops.py", "predict.py", "roofline.py")

#: Two ways of writing each predict.py function: the class's unfinished submissions mix them,
#: as a real class shares idioms, so no pair of them is a copy and many pairs overlap somewhat.
VARIANTS = {
    "predict_decode": [
        "    return bw_gbs * 1e9 / (params_read * bytes_per_weight)\n",
        "    bytes_per_token = params_read * bytes_per_weight\n    bandwidth = bw_gbs * 1e9\n"
        "    tokens = bandwidth / bytes_per_token\n    return float(tokens)\n"],
    "kv_bytes_per_token": [
        "    return 2 * layers * kv_heads * head_dim * bytes_per_value\n",
        "    per_layer = kv_heads * head_dim * bytes_per_value\n    k_and_v = 2\n"
        "    return float(k_and_v * per_layer * layers)\n"],
    "arithmetic_intensity": [
        "    return flops / bytes_moved\n",
        "    if bytes_moved <= 0:\n        raise ValueError('bytes_moved must be positive')\n"
        "    ratio = flops / bytes_moved\n    return ratio\n"],
    "ridge_point": [
        "    return peak_tflops * 1e12 / (bw_gbs * 1e9)\n",
        "    flops_per_s = peak_tflops * 1e12\n    bytes_per_s = bw_gbs * 1e9\n"
        "    return flops_per_s / bytes_per_s\n"],
    "attainable_tflops": [
        "    return min(peak_tflops, bw_gbs * intensity / 1000)\n",
        "    memory_roof = intensity * bw_gbs / 1000.0\n    if memory_roof < peak_tflops:\n"
        "        return memory_roof\n    return peak_tflops\n"],
    "prefill_seconds": [
        "    return 2 * params * prompt_tokens / (peak_tflops * 1e12)\n",
        "    total_flops = 2.0 * params * prompt_tokens\n    seconds = total_flops / (peak_tflops * 1e12)\n"
        "    return seconds\n"],
}
SIGNATURES = {"predict_decode": "params_read, bytes_per_weight, bw_gbs",
              "kv_bytes_per_token": "layers, kv_heads, head_dim, bytes_per_value",
              "arithmetic_intensity": "flops, bytes_moved", "ridge_point": "peak_tflops, bw_gbs",
              "attainable_tflops": "intensity, peak_tflops, bw_gbs",
              "prefill_seconds": "params, prompt_tokens, peak_tflops"}


def renamed(source: str) -> str:
    """``source`` with every name assigned inside a function renamed, every comment dropped and
    blank lines doubled: what a student hides a copy with."""
    tree = ast.parse(source)
    local = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    local.add(node.id)
    mapping = {name: f"my_{name[::-1]}_x" for name in local}
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out = []
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            tok = tok._replace(string="")
        elif tok.type == tokenize.NAME and tok.string in mapping:
            before = tokens[i - 1].string if i else ""
            after = tokens[i + 1].string if i + 1 < len(tokens) else ""
            if before != "." and not (after == "=" and _in_call(tokens, i)):
                tok = tok._replace(string=mapping[tok.string])
        out.append(tok)
    text = tokenize.untokenize(out)
    compile(text, "renamed", "exec")   # still a valid module
    return text.replace("\n\n", "\n\n\n")


def _in_call(tokens, i) -> bool:
    """Whether token ``i`` sits inside parentheses (a keyword argument, not an assignment)."""
    depth = 0
    for tok in tokens[:i]:
        if tok.string == "(":
            depth += 1
        elif tok.string == ")":
            depth -= 1
        elif tok.type == tokenize.NEWLINE:
            depth = 0
    return depth > 0


def unfinished_predict(rng: random.Random) -> str:
    """A predict.py of the stubs' imports with each function written one of two ways."""
    parts = ["import math\n\nfrom shared import validate\n"]
    for name, variants in VARIANTS.items():
        parts.append(f"\n\ndef {name}({SIGNATURES[name]}):\n{rng.choice(variants)}")
    return "".join(parts)


def make_similarity_class(folder: Path) -> dict[str, str]:
    """20 submissions: ``orig`` (the independent solution), ``copy`` (orig renamed), ``ref``
    (the reference) and 17 unfinished ones (the stubs with predict.py written from VARIANTS)."""
    rng = random.Random(17)
    roles = {}

    def write(name, files):
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text)
        roles[name] = name.rstrip("0123456789")

    write("orig", {f: INDEPENDENT[f].read_text() for f in MODULES})
    write("copy", {f: renamed(INDEPENDENT[f].read_text()) for f in MODULES})
    write("ref", {f: (SOLUTION / f).read_text() for f in MODULES})
    seen = set()
    i = 0
    while i < 17:
        text = unfinished_predict(rng)
        if text in seen:
            continue
        seen.add(text)
        write(f"part{i:02d}", {**{f: (STUBS / f).read_text() for f in MODULES}, "predict.py": text})
        i += 1
    return roles


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


def test_disguised_copy_ranks_first_in_a_class_of_20(report):
    _, pairs, proc = report
    assert len(pairs) == 20 * 19 // 2     # every pair of the 20 (each holds code beyond the stubs)
    first = pairs[0]
    assert {first["student_a"], first["student_b"]} == {"copy", "orig"} and first["rank"] == "1"
    assert float(first["similarity"]) > 95 > float(pairs[1]["similarity"])
    assert "copy ~ orig" in proc.stderr or "orig ~ copy" in proc.stderr


def test_independent_correct_solutions_rank_low(report):
    _, pairs, _ = report
    rank = {frozenset((p["student_a"], p["student_b"])): (int(p["rank"]), float(p["similarity"])) for p in pairs}
    for other in ("orig", "copy"):
        position, similarity = rank[frozenset((other, "ref"))]
        assert similarity < 20 and position > len(pairs) // 2, (other, position, similarity)


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


def test_report_says_it_is_evidence_not_a_verdict_and_shows_regions(report):
    base, pairs, _ = report
    html = (base / "out" / "report.html").read_text()
    assert "evidence for a person to look at, not a verdict" in html
    assert html.count("<mark>") > 10 and "copy ~ orig" in html.replace("orig ~ copy", "copy ~ orig")
    assert "http://" not in html and "https://" not in html


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


# --------------------------------------------------------------------------- baseline and clusters

DOCSTRING_PREDICT = GOOD / "docstring_predict" / "predict.py"


def make_ring_class(folder: Path) -> None:
    """7 submissions: ``ref`` (the reference), ``doc`` (a predict.py written apart from it into the
    stub, following the docstrings), a copy ring ``ring1`` (the independent solution) -> ``ring2``
    (it renamed) -> ``ring3`` (ring2 renamed again), ``half`` (compact_all_four's bw.py and
    flops.py) and ``stubs`` (the release untouched but one function)."""
    ring2 = {f: renamed(INDEPENDENT[f].read_text()) for f in MODULES}
    classes = {"ref": {f: (SOLUTION / f).read_text() for f in MODULES},
               "doc": {"predict.py": DOCSTRING_PREDICT.read_text()},
               "ring1": {f: INDEPENDENT[f].read_text() for f in MODULES},
               "ring2": ring2, "ring3": {f: renamed(t) for f, t in ring2.items()},
               "half": {f: (GOOD / "compact_all_four" / f).read_text() for f in ("bw.py", "flops.py")},
               "stubs": {**{f: (STUBS / f).read_text() for f in MODULES},
                         "predict.py": unfinished_predict(random.Random(5))}}
    for name, files in classes.items():
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text)


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


def test_a_copy_ring_of_three_is_one_cluster(ring):
    base, pairs, proc = ring
    clustered = {k: p["cluster"] for k, p in pairs.items() if p["cluster"]}
    assert set(clustered.values()) == {"C1"}
    assert set().union(*clustered) == {"ring1", "ring2", "ring3"}
    assert "1 cluster linked at 50% or more; C1: ring1, ring2, ring3" in proc.stderr
    html = (base / "out" / "report.html").read_text()
    assert "<td>C1</td><td>3</td><td>ring1, ring2, ring3</td>" in html


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
