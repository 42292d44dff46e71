"""A grading of some checks only (``grade-all --checks``), merged into the student's full result.

A run with ``--checks`` grades a subset. Where the student's stored result is a full grading of
the same submission under the same settings, the new tests replace that result's tests of those
checks and everything else stays: the merged result is again a full one. Where there is no such
full result, the subset's result is kept as it is, marked partial (``grade_all.partial``), and the
exports leave it out (gradebook.csv and canvas.csv must never show a subset's sum as a grade).

Every result says what it covers under ``grade_all``: ``checks`` (the ids graded, or "all"),
``partial`` (bool) and ``graded_at`` (ISO 8601 UTC; a merged result keeps ``graded_at`` of the
full grading and adds ``regraded``: check id -> when).
"""
from __future__ import annotations

import datetime as _dt

ALL = "all"
#: grade_all key of the per-check fingerprints (autograder/batch/fingerprint.py).
FINGERPRINTS = "fingerprints"


def now() -> str:
    """The current time as ISO 8601 UTC to the second, e.g. '2026-12-01T08:00:00Z'."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def batch_info(results: dict) -> dict:
    """``results['grade_all']`` as a dict (created when missing)."""
    info = results.get("grade_all")
    if not isinstance(info, dict):
        info = {}
        results["grade_all"] = info
    return info


def mark(results: dict, only, graded_at: str) -> dict:
    """``results`` stamped with what they cover: all checks (``only`` None) or the ids in ``only``."""
    info = batch_info(results)
    info["checks"] = ALL if only is None else sorted(only)
    info["partial"] = only is not None
    info["graded_at"] = graded_at
    return results


def is_partial(results: dict) -> bool:
    info = results.get("grade_all")
    return isinstance(info, dict) and bool(info.get("partial"))


def failed(results: dict) -> bool:
    """Whether ``results`` is a zero without grading (refused, crashed, out of time)."""
    info = results.get("grade_all")
    return isinstance(info, dict) and bool(info.get("reason"))


def merge(full: dict, part: dict, only, graded_at: str) -> dict:
    """``full`` with its tests of the checks in ``only`` replaced by ``part``'s (by test name, in
    ``full``'s order; new names go at the end); score recomputed as the sum of the tests."""
    only = set(only)
    fresh = {t.get("name"): t for t in part.get("tests", [])}
    tests, used = [], set()
    for test in full.get("tests", []):
        if test.get("check") not in only:
            tests.append(test)
        elif test.get("name") in fresh:
            tests.append(fresh[test["name"]])
            used.add(test["name"])
    tests += [t for name, t in fresh.items() if name not in used]
    merged = {k: v for k, v in full.items() if k != "tests"}
    merged["tests"] = tests
    merged["score"] = round(sum(float(t.get("score") or 0.0) for t in tests), 6)
    info = dict(full.get("grade_all") or {})
    info.pop("reason", None)
    info["checks"] = ALL
    info["partial"] = False
    info["regraded"] = {**(info.get("regraded") or {}), **{c: graded_at for c in sorted(only)}}
    fresh_info = part.get("grade_all") if isinstance(part.get("grade_all"), dict) else {}
    info[FINGERPRINTS] = {**(info.get(FINGERPRINTS) or {}), **(fresh_info.get(FINGERPRINTS) or {})}
    merged["grade_all"] = info
    return merged


def coverage(results: dict) -> tuple[str, str]:
    """(what the result covers, when) for an export row: ('all', '2026-...Z') or
    ('partial: sync_present', ...); a merged result's time names the checks regraded later."""
    info = results.get("grade_all") if isinstance(results.get("grade_all"), dict) else {}
    if info.get("reason"):
        return "none (not graded)", str(info.get("graded_at", ""))
    checks = info.get("checks", ALL)
    if checks == ALL or not info.get("partial"):
        what = ALL
    else:
        what = "partial: " + " ".join(checks)
    when = str(info.get("graded_at", ""))
    regraded = info.get("regraded") or {}
    if regraded:
        latest = max(regraded.values())
        when = f"{when}; {' '.join(sorted(regraded))} regraded {latest}"
    return what, when
