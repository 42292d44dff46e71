"""Gradescope's results.json: building it, writing it atomically, and a short human summary.

Top level: score, max_score, execution_time (s), output, visibility, tests[]. Each test: name
("<task id> <short title> [<check id>]"), score, max_score, status ('passed'/'failed'), output,
visibility, plus two extra keys Gradescope allows and later tools use: "task" and "check".
"""
from __future__ import annotations

import json
from pathlib import Path

from autograder.core.atomic import atomic_write

#: Decimal places kept in scores (points split three ways stay exact enough to add up).
PLACES = 4
#: Longest output kept per test, in characters.
MAX_TEST_OUTPUT = 2000


def test_entry(*, task_id: str, check_id: str, title: str, score: float, max_score: float,
               passed: bool, output: str, visibility: str) -> dict:
    """One test of results.json."""
    text = output.strip()
    if len(text) > MAX_TEST_OUTPUT:
        text = text[: MAX_TEST_OUTPUT - 3] + "..."
    return {
        "name": f"{task_id} {title} [{check_id}]",
        "score": round(score, PLACES),
        "max_score": round(max_score, PLACES),
        "status": "passed" if passed else "failed",
        "output": text,
        "visibility": visibility,
        "task": task_id,
        "check": check_id,
    }


def build(tests: list[dict], *, output: str, execution_time: float, visibility: str) -> dict:
    """The whole results dict; score and max_score are the sums over ``tests``."""
    return {
        # Per-test shares are rounded to PLACES; their sums are rounded to 2 so 3 x 33.3333 shows as 100.
        "score": round(sum(t["score"] for t in tests), 2),
        "max_score": round(sum(t["max_score"] for t in tests), 2),
        "execution_time": round(execution_time, 2),
        "output": output,
        "visibility": visibility,
        "tests": tests,
    }


def write(results: dict, path: Path | str) -> Path:
    """Write ``results`` to ``path`` atomically (temp file in the same folder, fsync, rename)."""
    path = Path(path)
    atomic_write(path, json.dumps(results, indent=2, allow_nan=False) + "\n")
    return path


def per_task(results: dict) -> dict[str, tuple[float, float]]:
    """Task id -> (score, max_score), in the order the tests appear."""
    totals: dict[str, list[float]] = {}
    for t in results["tests"]:
        entry = totals.setdefault(t["task"], [0.0, 0.0])
        entry[0] += t["score"]
        entry[1] += t["max_score"]
    return {k: (round(v[0], 2), round(v[1], 2)) for k, v in totals.items()}


def summary(results: dict, titles: dict[str, str] | None = None) -> str:
    """A few lines for a human: score per task, the total, and the failed checks' ids."""
    titles = titles or {}
    lines = []
    for task_id, (score, max_score) in per_task(results).items():
        title = titles.get(task_id, "")
        lines.append(f"{task_id:<6} {score:>6g} / {max_score:<6g} {title}")
    lines.append(f"{'total':<6} {round(results['score'], 2):>6g} / {round(results['max_score'], 2):<6g}")
    failed = [t["check"] for t in results["tests"] if t["status"] == "failed"]
    if failed:
        lines.append(f"failed: {', '.join(failed)}")
    return "\n".join(lines)
