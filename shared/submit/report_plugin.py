"""A pytest plugin for ``python -m shared.submit``: each public test's task marks and how it ended.

Loaded into the child pytest run with ``-p shared.submit.report_plugin``; writes JSON to the file
the SUBMIT_REPORT setting names (shared/settings.py): a list of {"marks": [...], "outcome":
"passed" | "failed" | "skipped", "message": the first line of a failure}, plus {"uncollected":
test file, "message": why} for each test file that could not be loaded (a student module that does
not import). Needs only json, os, pytest and shared.settings.
"""
import json
import os
import re

from shared import settings

#: Environment variable naming the JSON file the plugin writes.
REPORT_ENV = settings.SUBMIT_REPORT.name

_tests: dict[str, dict] = {}
_uncollected: list[dict] = []


def pytest_collection_finish(session):
    for item in session.items:
        _tests[item.nodeid] = {"marks": sorted({mark.name for mark in item.iter_markers()}),
                               "outcome": "skipped", "message": ""}


def _first_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def _error_line(report) -> str:
    """The last ``E ...`` line of a failed collection (``SyntaxError: ...``), with the file and line
    it names when it names one ('bw.py line 76: SyntaxError: invalid syntax'); else its first line."""
    lines = str(report.longrepr).splitlines()
    errors = [line[1:].strip() for line in lines if line.startswith("E ") and line[1:].strip()]
    if not errors:
        return _first_line(report)
    where = [m for m in (re.search(r'File "([^"]+)", line (\d+)', e) for e in errors) if m]
    place = f"{os.path.basename(where[-1].group(1))} line {where[-1].group(2)}: " if where else ""
    return (place + errors[-1])[:300]


def pytest_collectreport(report):
    if report.failed:
        _uncollected.append({"uncollected": report.nodeid, "message": _error_line(report)})


def pytest_runtest_logreport(report):
    entry = _tests.setdefault(report.nodeid, {"marks": [], "outcome": "skipped", "message": ""})
    if report.failed and entry["outcome"] != "failed":
        entry["outcome"], entry["message"] = "failed", _first_line(report)
    elif report.passed and report.when == "call" and entry["outcome"] != "failed":
        entry["outcome"] = "passed"


def pytest_sessionfinish(session, exitstatus):
    path = settings.SUBMIT_REPORT.get()
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(list(_tests.values()) + _uncollected, fh)
