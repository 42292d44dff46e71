"""A generated class of submissions for the grade-all tests and bench/grade_all.py.

``make_class(folder, n)`` writes ``n`` student entries, cycling through KINDS: the reference
solution (as a folder or a zip), each classic mistake made by editing one line of the reference,
the unfinished stubs, entries with nothing gradable (empty folder, broken zip, only notes) and
pathological code (a hang, a crash at import, a memory hog). It returns the kind of each student,
so a test can count what the class report must say. The tests in this file check that every edit
really applied (a generator that silently wrote the reference would make every count wrong).
"""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "why17"
STUBS = ROOT / "assignments" / "why17"
MODULES = ("bw.py", "flops.py", "predict.py", "roofline.py")

#: kind -> (file, text in the reference, replacement): one line changed makes one mistake.
EDITS = {
    "bytes_once": ("bw.py", "return 2 * n_bytes * iters / seconds / 1e9",
                   "return n_bytes * iters / seconds / 1e9"),
    "no_sync": ("bw.py", "    devices.synchronize(dev)\n    seconds = time.perf_counter() - start",
                "    seconds = time.perf_counter() - start"),
    "tiny_buffer": ("bw.py", "n_bytes = max(CACHE_MULTIPLE * devices.last_level_cache_bytes(dev), MIN_MEASURE_BYTES)",
                    "n_bytes = 8 * 2**20"),
    "hang": ("bw.py", '    ### BEGIN SOLUTION\n    validate.positive_int("n_bytes", n_bytes, "bytes")',
             '    ### BEGIN SOLUTION\n    while True:\n        pass\n    validate.positive_int("n_bytes", n_bytes, "bytes")'),
    "crash": ("bw.py", "import torch\n", "import torch\nimport os\nos._exit(3)\n"),
    "memory_hog": ("bw.py", '    ### BEGIN SOLUTION\n    validate.positive_int("n_bytes", n_bytes, "bytes")',
                   '    ### BEGIN SOLUTION\n    hog = bytearray(64 * 2**30)\n'
                   '    validate.positive_int("n_bytes", n_bytes, "bytes")'),
}
#: The kinds, in the order make_class cycles through them.
KINDS = ("reference_folder", "reference_zip", "bytes_once", "no_sync", "tiny_buffer",
         "bytes_once_zip", "stubs", "empty_folder", "broken_zip", "notes_only", "hang", "crash",
         "memory_hog", "reference_measured")
#: Which lesson mistake (autograder/lessons/why17/mistakes.yml id) each kind must be counted under.
MISTAKE_OF = {"bytes_once": "bytes_counted_once", "bytes_once_zip": "bytes_counted_once",
              "no_sync": "forgot_synchronize", "tiny_buffer": "buffer_in_cache"}
#: Kinds that hold nothing gradable (a zero with a reason, without grading).
NOT_GRADABLE = ("empty_folder", "broken_zip", "notes_only")
#: Checks that tell these kinds apart quickly (grade-all --checks in tests).
QUICK_CHECKS = ("bytes_counted_twice", "sync_present", "buffer_exceeds_cache", "measure_file")


def measurements_json() -> str:
    """A valid Measure table (measurements.json) of an H100 run, for the feedback plots."""
    from shared import tables
    params = tables.model("llama-3.1-8b").params_read()
    bw, peak = 2900.0, 780.0
    ceiling = bw * 1e9 / (params * 2.0)
    return json.dumps({
        "schema": "why17-measurements/1",
        "device": {"name": "NVIDIA H100 80GB HBM3", "key": "h100-sxm", "type": "cuda"},
        "bw_gbs": bw, "peak_tflops": peak, "ridge_flops_per_byte": peak * 1e12 / (bw * 1e9),
        "sweep_gbs_by_mib": {"8": 8800.0, "32": 7900.0, "128": 2950.0, "512": 2920.0,
                             "2048": 2910.0, "8192": 2905.0},
        "rows": [{"model": "llama-3.1-8b", "params_read": params, "bytes_per_weight": 2.0,
                  "ceiling_tok_s": ceiling, "measured_tok_s": 0.8 * ceiling, "pct_of_ceiling": 80.0}],
    }, indent=1)


def _copy_modules(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True)
    for name in MODULES:
        shutil.copyfile(src / name, dst / name)


def _zip_folder(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder).as_posix())
    shutil.rmtree(folder)


def write_student(folder: Path, name: str, kind: str) -> Path:
    """Write one student's entry of ``kind`` under ``folder``; the entry's path."""
    entry = folder / name
    base = kind.removesuffix("_zip")
    if kind in ("reference_folder", "reference_zip", "reference_measured"):
        _copy_modules(SOLUTION, entry)
        if kind == "reference_measured":
            (entry / "measurements.json").write_text(measurements_json())
    elif base in EDITS:
        _copy_modules(SOLUTION, entry)
        file, old, new = EDITS[base]
        text = (entry / file).read_text()
        assert text.count(old) == 1, f"{kind}: the edit does not apply to solutions/why17/{file}"
        (entry / file).write_text(text.replace(old, new))
    elif kind == "stubs":
        _copy_modules(STUBS, entry)
    elif kind == "empty_folder":
        entry.mkdir()
    elif kind == "notes_only":
        entry.mkdir()
        (entry / "notes.txt").write_text("I ran out of time.\n")
    elif kind == "broken_zip":
        target = folder / f"{name}.zip"
        target.write_bytes(b"PK\x03\x04 this is not really a zip")
        return target
    else:
        raise ValueError(f"unknown kind {kind!r}")
    if kind.endswith("_zip"):
        target = folder / f"{name}.zip"
        _zip_folder(entry, target)
        return target
    return entry


def make_class(folder: Path, n: int, kinds=KINDS) -> dict[str, str]:
    """``n`` students named s000, s001, ... cycling through ``kinds``; student -> kind."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for i in range(n):
        name = f"s{i:03d}"
        kind = kinds[i % len(kinds)]
        write_student(folder, name, kind)
        out[name] = kind
    return out


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_each_edit_changes_exactly_one_place(tmp_path, kind):
    entry = write_student(tmp_path, "x", kind)
    file, old, new = EDITS[kind]
    text = (entry / file).read_text()
    assert new in text and (old not in text or old in new)
    assert text != (SOLUTION / file).read_text()


def test_make_class_writes_folders_zips_and_the_kinds_it_reports(tmp_path):
    kinds = make_class(tmp_path / "class", len(KINDS))
    assert sorted(kinds.values()) == sorted(KINDS)
    for name, kind in kinds.items():
        if kind.endswith("_zip") or kind == "broken_zip":
            assert (tmp_path / "class" / f"{name}.zip").is_file()
        else:
            assert (tmp_path / "class" / name).is_dir()
    good = [n for n, k in kinds.items() if k == "reference_zip"][0]
    with zipfile.ZipFile(tmp_path / "class" / f"{good}.zip") as zf:
        assert sorted(zf.namelist()) == sorted(MODULES)
