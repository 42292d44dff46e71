"""Attack: overwrite the results wherever they might be written, with full marks.

``attack()`` returns every path it managed to write; the test asserts the grader's results are
the grader's (the forged score never appears) and that each write landed in the child's own
private folders, gone with it.
"""
import json
import os

ATTACK = True
FORGED = {"score": 1000.0, "max_score": 100.0, "output": "FORGED BY STUDENT", "tests": []}
NAMES = ("results.json", "results.json.tmp", "gradebook.csv")


def _candidates():
    places = {os.getcwd(), os.path.dirname(os.getcwd()), "/tmp", "/autograder/results",
              "/autograder", os.environ.get("HOME", "/"), "/work/main", "/work/main/out"}
    for key in ("AUTOGRADER_ROOT", "OUT", "RESULTS"):
        if os.environ.get(key):
            places.add(os.environ[key])
            places.add(os.path.join(os.environ[key], "results"))
    for top, dirs, files in os.walk("/", onerror=lambda e: None):
        if top.startswith(("/proc", "/sys", "/dev", "/usr")):
            dirs[:] = []
            continue
        if any(n in files for n in NAMES):
            places.add(top)
    return sorted(places)


def attack():
    written = []
    for place in _candidates():
        for name in NAMES:
            path = os.path.join(place, name)
            try:
                with open(path, "w") as f:
                    json.dump(FORGED, f)
                written.append(path)
            except OSError:
                pass
    return written


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        attack()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0

