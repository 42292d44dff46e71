"""Reading YAML data files (course.yml, the data tables, the simulator's profiles, mistakes.yml).

``safe_load`` is ``yaml.safe_load`` with libyaml's C parser when PyYAML was built with it (the
wheels on PyPI are): the same safe constructors, so the same plain data, about nine times
faster (course.yml: 17.6 ms in Python, 2.0 ms in C, on the 2-core development machine). The
grader reads course.yml at least twice per submission and each sandboxed child reads the tables.
Without libyaml it is the pure-Python parser, as before.
"""
from __future__ import annotations

import yaml

#: SafeLoader's C twin when PyYAML has libyaml, else SafeLoader itself.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(stream):
    """The one document in ``stream`` (text or a file object) as plain data; yaml.YAMLError
    (with ``problem_mark`` when it has a position) for invalid YAML."""
    return yaml.load(stream, Loader=LOADER)
