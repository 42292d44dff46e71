"""Record a sample's verdicts through the command line, to compare two versions of the grader.

    .venv/bin/python bench/verdict_dump.py OUT.json [--compare OLD.json] [--device sim|cpu]

Grades the reference (solutions/why17), the untouched stubs (assignments/why17) and a few
fixtures of autograder/lessons/why17/fixtures/ (wrong/ and gpu/, each overlaid on the reference)
with ``python -m autograder grade PATH --out FILE``, one process per submission as a TA runs it,
and writes each submission's score and every check's status and score to OUT.json. With
``--compare`` it prints every check whose status or score differs from OLD.json and exits 1 when
one does. Figures only: no threshold is asserted.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.lessons.why17.fixtures import build  # noqa: E402

#: (kind, name) of each fixture graded besides the reference and the stubs.
SAMPLE = (("wrong", "kv_without_2"), ("wrong", "bw_returns_tensor"), ("wrong", "roofline_linear_axes"),
          ("wrong", "ceiling_ignores_kv"), ("wrong", "flops_gflops"), ("gpu", "wrong_no_sync"),
          ("gpu", "wrong_bytes_once"), ("gpu", "good_events"), ("gpu", "wrong_flops_no_warmup"))


def verdicts(results: dict) -> dict:
    """The score, and each check's (status, score), of one results.json."""
    return {"score": results["score"], "max_score": results["max_score"],
            "tests": {t["check"]: [t["status"], t["score"]] for t in results["tests"]}}


def grade(path: Path, out: Path, device: str | None) -> dict:
    """Grade ``path`` with the command line; its verdicts."""
    cmd = [sys.executable, "-m", "autograder", "grade", str(path), "--out", str(out)]
    cmd += ["--device", device] if device else []
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"grading {path} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return verdicts(json.loads(out.read_text()))


def compare(old: dict, new: dict) -> list[str]:
    """One line per submission or check whose verdict differs."""
    lines = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name, {}), new.get(name, {})
        if a.get("score") != b.get("score"):
            lines.append(f"{name}: score {a.get('score')} -> {b.get('score')}")
        for check in sorted(set(a.get("tests", {})) | set(b.get("tests", {}))):
            if a.get("tests", {}).get(check) != b.get("tests", {}).get(check):
                lines.append(f"{name} {check}: {a.get('tests', {}).get(check)} -> {b.get('tests', {}).get(check)}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--compare", default=None, help="an earlier OUT.json to compare with")
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="why17-verdict-dump-"))
    subjects = {"reference": ROOT / "solutions" / "why17", "stubs": ROOT / "assignments" / "why17"}
    for kind, name in SAMPLE:
        subjects[f"{kind}/{name}"] = build.overlay(kind, name, work / kind / name)
    dump = {}
    for label, path in subjects.items():
        started = time.monotonic()
        dump[label] = grade(path, work / f"{label.replace('/', '_')}.json", args.device)
        print(f"{label}: {dump[label]['score']:g}/{dump[label]['max_score']:g} "
              f"in {time.monotonic() - started:.1f} s", flush=True)
    Path(args.out).write_text(json.dumps(dump, indent=1, sort_keys=True))
    if args.compare:
        differ = compare(json.loads(Path(args.compare).read_text()), dump)
        print("\n".join(differ) or f"every verdict as in {args.compare}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
