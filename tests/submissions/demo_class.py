"""The sample class `make demo` grades: the reference, the untouched stubs and classic mistakes.

    python -m tests.submissions.demo_class build OUT_DIR     # one folder per student
    python -m tests.submissions.demo_class table RESULTS_DIR # score table from OUT/<student>/results.json

Each mistake is a folder of tests/submissions/wrong/ laid over the reference, with the reference's
Measure table (tests/submissions/measurements/reference), so its score shows what one slip costs.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.submissions import build

MEASUREMENTS = build.HERE / "measurements" / "reference" / "measurements.json"
#: Student folder name -> the wrong/ submission laid over the reference (None: the reference itself).
MISTAKES = {
    "counts-bytes-per-s": "bw_bytes_per_s",
    "forgets-1e9": "decode_forgets_1e9",
    "kv-without-2": "kv_without_2",
    "attainable-with-max": "attainable_max",
    "roofline-linear-axes": "roofline_linear_axes",
}


def build_class(out: Path) -> list[str]:
    """Write OUT/<student>/ for every student of the sample class; their names."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copytree(build.REFERENCE, out / "reference", ignore=shutil.ignore_patterns("tests", "__pycache__", "*.ipynb"))
    shutil.copyfile(MEASUREMENTS, out / "reference" / "measurements.json")
    stubs = build.REFERENCE.parent.parent / "assignments" / "why17"
    shutil.copytree(stubs, out / "untouched-stubs", ignore=shutil.ignore_patterns("tests", "__pycache__", "*.ipynb"))
    for student, wrong in MISTAKES.items():
        folder = build.overlay("wrong", wrong, out / student)
        shutil.copyfile(MEASUREMENTS, folder / "measurements.json")
    return sorted(p.name for p in out.iterdir())


def table(results_dir: Path) -> str:
    """One row per student: score per task and in total, and the checks failed."""
    rows = []
    for path in sorted(results_dir.glob("*/results.json")):
        data = json.loads(path.read_text())
        per_task = {}
        for t in data["tests"]:
            per_task[t["task"]] = per_task.get(t["task"], 0.0) + t["score"]
        failed = [t["check"] for t in data["tests"] if t["status"] == "failed"]
        rows.append((path.parent.name, per_task, data["score"], data["max_score"], failed))
    tasks = sorted({task for _n, per, *_ in rows for task in per})
    head = f"{'student':<22}" + "".join(f"{t:>7}" for t in tasks) + f"{'total':>9}  failed checks"
    lines = [head, "-" * len(head)]
    for name, per, score, max_score, failed in rows:
        shown = ", ".join(failed[:4]) + (f", +{len(failed) - 4} more" if len(failed) > 4 else "")
        lines.append(f"{name:<22}" + "".join(f"{per.get(t, 0):>7.1f}" for t in tasks)
                     + f"{score:>6.1f}/{max_score:g}  {shown}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("build", "table"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if argv[1] == "build":
        names = build_class(Path(argv[2]))
        print(f"sample class in {argv[2]}: {', '.join(names)}")
    else:
        print(table(Path(argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
