"""Where the test suite's time goes, per module, from a pytest run's JUnit XML.

    python -m pytest -q -n 3 --junitxml=/tmp/suite.xml tests
    python bench/suite_time.py /tmp/suite.xml --workers 3 --wall 988

Prints each module's seconds (the sum of its tests' setup, call and teardown, as JUnit records
them) and test count, longest first, and the share of the workers' time the tests filled
(their sum over workers x wall seconds). Near 100% no worker waited for work; with more workers
than cores (make test's 3 on 2) the cores were then busy throughout, and only less work, not
another order of the modules, shortens the run.
"""
from __future__ import annotations

import argparse
import collections
import sys
import xml.etree.ElementTree as ET


def module_of(classname: str) -> str:
    """``tests.core.test_late`` or ``tests.core.test_late.TestX`` -> ``tests/core/test_late.py``."""
    parts = classname.split(".")
    while parts and not parts[-1].startswith("test_"):
        parts.pop()
    return "/".join(parts) + ".py" if parts else classname


def per_module(path: str) -> tuple[dict[str, float], dict[str, int]]:
    """(module -> seconds, module -> tests) over every test case of the JUnit file ``path``."""
    seconds: dict[str, float] = collections.defaultdict(float)
    count: dict[str, int] = collections.defaultdict(int)
    for case in ET.parse(path).getroot().iter("testcase"):
        module = module_of(case.get("classname") or "")
        seconds[module] += float(case.get("time") or 0)
        count[module] += 1
    return seconds, count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("junit", help="the file pytest's --junitxml wrote")
    ap.add_argument("--workers", type=int, default=1, help="pytest-xdist workers of that run (-n)")
    ap.add_argument("--wall", type=float, help="the run's wall seconds (pytest's last line)")
    ap.add_argument("--top", type=int, default=30, help="modules to list (default 30)")
    args = ap.parse_args(argv)
    try:
        seconds, count = per_module(args.junit)
    except (OSError, ET.ParseError) as e:
        print(f"error: {args.junit}: not a readable JUnit XML file ({e})", file=sys.stderr)
        return 2
    total = sum(seconds.values())
    print(f"{sum(count.values())} tests, {total:.0f} s in all")
    if args.wall:
        print(f"the tests filled {100 * total / (args.workers * args.wall):.0f}% of {args.workers} workers "
              f"x {args.wall:.0f} s")
    for module, secs in sorted(seconds.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{secs:8.1f} s {count[module]:5d} tests  {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
