"""A pytest plugin for the package's tests: what each public test was marked with and how it ended.

Loaded into a child pytest run with ``-p pytest_task_report`` (its folder on PYTHONPATH); writes
JSON to the path in $REPORT_ENV: {nodeid: {"marks": [...], "outcome": ..., "message": ...}}.
Standalone on purpose (json, os, pytest only), so it also runs inside an unpacked student bundle;
hence its variable is declared here, not in shared/settings.py (a test harness's, not a setting).
"""
import json
import os

#: Environment variable naming the JSON file the plugin writes (tests/helpers/public_runs.py sets it).
REPORT_ENV = "WHY17_TASK_REPORT"

_items: dict[str, dict] = {}


def pytest_collection_finish(session):
    for item in session.items:
        _items[item.nodeid] = {"marks": sorted({m.name for m in item.iter_markers()}),
                               "outcome": "collected", "message": ""}


def pytest_runtest_logreport(report):
    entry = _items.setdefault(report.nodeid, {"marks": [], "outcome": "collected", "message": ""})
    if report.failed:
        entry["outcome"] = "failed" if report.when == "call" else "error"
        crash = getattr(report.longrepr, "reprcrash", None)
        entry["message"] = crash.message if crash is not None else str(report.longrepr)[-2000:]
    elif report.skipped and entry["outcome"] == "collected":
        entry["outcome"] = "skipped"
    elif report.passed and report.when == "call":
        entry["outcome"] = "passed"


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(_items, fh, indent=1)
