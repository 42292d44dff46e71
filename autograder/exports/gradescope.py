"""Gradescope's autograder package: ``setup.sh``, ``run_autograder`` and the grader, in one zip.

Gradescope unpacks the zip into ``$ROOT/source`` (``ROOT`` is ``/autograder`` there), runs
``setup.sh`` once as root when it builds the image, then, for each submission, runs
``run_autograder`` with the student's files in ``$ROOT/submission``; it reads
``$ROOT/results/results.json``. Both scripts take ``ROOT`` from ``AUTOGRADER_ROOT`` when set.

- ``setup.sh`` finds (or installs) Python >= 3.11, makes a venv at ``$ROOT/venv`` and installs
  requirements-grading.txt: only what grading imports (GRADING_PACKAGES), each line taken from
  requirements.txt when the zip is built, so the two never drift; torch from PyTorch's CPU index at
  the same pin (no GPU there; ``$WHY17_TORCH_INDEX`` replaces that index, as the tests do with this
  machine's local one);
- ``run_autograder`` hides the grader's files from other users (root only), then runs
  ``python -m autograder grade $ROOT/submission --out $ROOT/results/results.json`` with the
  packaged source on PYTHONPATH and the venv's Python, or the PYTHON setting's when set (the tests
  point it at the project's venv). When grading cannot finish it still writes a valid
  results.json with score 0, so Gradescope never shows a bare failure; a refused submission
  (exit status 2: a symlink, an unreadable zip ...) gets the grader's one-line reason in that
  output, where the student sees it (stderr reaches only the instructor).

The zip's ``package.json`` records course.yml's sha256; ``gradescope --check ZIP`` says when
course.yml changed since the zip was built (``stale``): Gradescope would grade under the old one.

Visibility of every test is course.yml's (hidden, after_due_date, after_published, visible), as
the grader writes it; the package carries course.yml, so an instructor changes it in one place.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile
from pathlib import Path

from autograder.core import settings
from autograder.core.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
#: What the package holds besides the two scripts and requirements-grading.txt (written, not
#: copied): the grader, the shared code, the reference solutions (the trusted reference process
#: needs them), the course and pyproject.toml.
PACKAGED = ("autograder", "shared", "solutions", "course.yml", "pyproject.toml")
#: What grading imports, by package name (line and pin as requirements.txt has them): torch (the
#: student's code and the simulated GPU), numpy, matplotlib (the roofline plot), pyyaml (course.yml).
#: Not hypothesis (the property checks grade from their table of cases; hypothesis draws it, a
#: maintainer's step), nbgrader, pytest, selenium, copydetect or ruff.
GRADING_PACKAGES = ("torch", "numpy", "matplotlib", "pyyaml")
#: The runtime requirements file in the zip, written from requirements.txt by grading_requirements().
GRADING_REQUIREMENTS = "requirements-grading.txt"
#: Never packaged: caches and editor debris.
SKIPPED = re.compile(r"(^|/)(__pycache__|\.pytest_cache|\.hypothesis|\.ipynb_checkpoints)(/|$)|\.py[co]$|~$")
#: PyTorch's index of CPU-only wheels (Gradescope's machines have no GPU).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: A fixed timestamp for every zip entry, so the same tree gives the same bytes.
ZIP_TIME = (2020, 1, 1, 0, 0, 0)

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (see autograder/exports/gradescope.py).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null \
       && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        PYTHON="$(command -v "$candidate")"; break
    fi
done
if [ -z "$PYTHON" ]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv
    PYTHON="$(command -v python3.11)"
fi
"$PYTHON" -m venv --clear "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --quiet --upgrade pip
# torch from the CPU index first, at the project's pin; requirements-grading.txt then finds it satisfied.
"$ROOT/venv/bin/python" -m pip install --quiet --index-url "${WHY17_TORCH_INDEX:-@TORCH_INDEX@}" "@TORCH_PIN@"
"$ROOT/venv/bin/python" -m pip install --quiet -r "$SOURCE/@GRADING_REQUIREMENTS@"
chmod -R a+rX "$ROOT/venv"
# A smoke test: the grader imports and reads course.yml.
cd "$SOURCE" && PYTHONPATH="$SOURCE" "$ROOT/venv/bin/python" -c 'import autograder.core.course as c; c.load()'
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope's entry point: grade $ROOT/submission into $ROOT/results/results.json.
# ROOT is $AUTOGRADER_ROOT or /autograder; the Python is $@PYTHON_ENV@ or $ROOT/venv/bin/python.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PY="${@PYTHON_ENV@:-$ROOT/venv/bin/python}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
if [ "$(id -u)" = 0 ]; then
    # Student code runs as another uid (autograder/sandbox/isolation.py); where the kernel refuses
    # namespaces these permissions are what keeps the grader, the hidden checks, the reference
    # solutions, the results and the submission metadata out of its reach.
    # autograder/runtime/ (the child's side of the sandbox) and the package marker
    # autograder/__init__.py (a docstring) stay readable; autograder/ itself keeps only its
    # search bit, so the rest of the grader cannot be listed or read.
    for secret in @SECRETS@ "$ROOT/results" "$ROOT/submission_metadata.json"; do
        [ "$secret" = "$SOURCE/autograder/runtime" ] && continue
        [ "$secret" = "$SOURCE/autograder/__init__.py" ] && continue
        [ -e "$secret" ] && chmod -R go-rwx "$secret"
    done
    chmod go-rw,go+x "$SOURCE/autograder"
fi
cd "$SOURCE"
ERRORS="$(mktemp)"
# Gradescope's metadata is read from where its harness writes it, never from the submission.
METADATA=()
[ -f "$ROOT/submission_metadata.json" ] && METADATA=(--submission-metadata "$ROOT/submission_metadata.json")
PYTHONPATH="$SOURCE" "$PY" -m autograder grade "$ROOT/submission" --out "$RESULTS" \
    ${METADATA[@]+"${METADATA[@]}"} 2>"$ERRORS"
status=$?
cat "$ERRORS" >&2
if [ "$status" -ne 0 ] || [ ! -s "$RESULTS" ]; then
    if [ "$status" -eq 2 ]; then
        # A refusal (a submission that cannot be graded safely, bad usage) is one line on stderr;
        # the student sees it in results.json, as JSON text (control bytes dropped, \ and " escaped).
        reason="$(grep -v '^[[:space:]]*$' "$ERRORS" | tail -n 1 | head -c 600 | tr -d '\000-\037' \
                  | sed -e 's/^error: //' -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
        message="The autograder refused this submission: ${reason:-no reason given}. Fix that and submit again."
    else
        message="The autograder could not grade this submission (exit status $status). """ \
r"""Nothing of your work was lost; please tell your instructor."
    fi
    cat > "$RESULTS" <<EOF
{"score": 0, "output": "$message", "tests": []}
EOF
fi
rm -f "$ERRORS"
exit 0
"""


def torch_pin(requirements: Path) -> str:
    """The ``torch==X`` line of requirements.txt (the one pin setup.sh installs from the CPU index)."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if re.match(r"^torch\s*==", line):
            return line.replace(" ", "")
    raise UsageError(f"{requirements}: no 'torch==VERSION' line; setup.sh needs the pin")


def _package_name(line: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def grading_requirements(requirements: Path) -> str:
    """requirements-grading.txt: each of GRADING_PACKAGES as ``requirements`` (the project's
    requirements.txt) has it, pin included; a package missing there is one clear error."""
    lines = [line.split("#", 1)[0].strip() for line in requirements.read_text(encoding="utf-8").splitlines()]
    listed = {_package_name(line): line for line in lines if line}
    missing = [name for name in GRADING_PACKAGES if name not in listed]
    if missing:
        raise UsageError(f"{requirements}: no line for {', '.join(missing)}; grading needs it")
    body = "\n".join(listed[name] for name in GRADING_PACKAGES)
    return (f"# What grading needs, written from requirements.txt by `python -m autograder gradescope`;\n"
            f"# setup.sh installs only this (autograder/exports/gradescope.py).\n{body}\n")


def scripts(root: Path = ROOT) -> dict[str, str]:
    """The two scripts at the zip's top level, filled in from this project."""
    from autograder.grading import simseed as seed

    hidden = ("solutions", "course.yml", seed.SECRET_FILE)
    secrets = " ".join(['"$SOURCE"/autograder/*'] + [f'"$SOURCE/{name}"' for name in hidden])
    setup = (SETUP_SH.replace("@TORCH_INDEX@", TORCH_CPU_INDEX)
             .replace("@TORCH_PIN@", torch_pin(root / "requirements.txt"))
             .replace("@GRADING_REQUIREMENTS@", GRADING_REQUIREMENTS))
    return {"setup.sh": setup, "run_autograder": (RUN_AUTOGRADER.replace("@SECRETS@", secrets)
                                                       .replace("@PYTHON_ENV@", settings.PYTHON.name))}


def files(root: Path = ROOT) -> list[Path]:
    """Every packaged file, relative to ``root``, sorted; with the course's simulated-GPU secret
    (generated now if the course has none: autograder/grading/simseed.py), which run_autograder makes
    readable by root only, so the package grades with a secret of its own."""
    from autograder.grading import simseed as seed

    secret = seed.course_secret(root)
    out = [Path(seed.SECRET_FILE)] if secret.source == "course file" else []
    for name in PACKAGED:
        path = root / name
        if not path.exists():
            raise UsageError(f"cannot package {path}: it does not exist")
        found = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for p in found:
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                raise UsageError(f"cannot package {rel}: it is a symbolic link")
            if not SKIPPED.search(rel):
                out.append(Path(rel))
    return sorted(out)


def _add(zf: zipfile.ZipFile, name: str, data: bytes, executable: bool) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    zf.writestr(info, data)


#: The package's record of what it was built from (at the zip's top): course.yml's sha256.
STAMP = "package.json"


def stamp(root: Path = ROOT) -> dict:
    """What a package built now from ``root`` records: course.yml's sha256 (the policy, points,
    visibility and late work it grades under)."""
    return {"course.yml sha256": hashlib.sha256((root / "course.yml").read_bytes()).hexdigest()}


def stale(package: Path | str, root: Path = ROOT) -> str | None:
    """Why the package zip at ``package`` no longer matches ``root``'s course.yml (one line), or
    None when it does. UsageError when it is not a package this command built."""
    package = Path(package)
    try:
        with zipfile.ZipFile(package) as zf:
            built = json.loads(zf.read(STAMP).decode("utf-8"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        raise UsageError(f"{package}: not a package built by `python -m autograder gradescope` "
                         f"(no readable {STAMP}); rebuild it") from None
    if built != stamp(root):
        return (f"{package} was built from another course.yml than {root / 'course.yml'}: on Gradescope it "
                f"grades under the old points, visibility and late policy; rebuild it "
                f"(python -m autograder gradescope --out {package}) and upload it again")
    return None


def build(out: Path | str, root: Path = ROOT) -> Path:
    """Write the autograder zip to ``out``; the same project tree gives the same bytes."""
    out = Path(out)
    if out.exists() and out.is_dir():
        raise UsageError(f"--out {out}: is a folder; give a file name such as autograder.zip")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the folder {out.parent} ({exc.strerror})") from None
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, text in scripts(root).items():
            _add(zf, name, text.encode(), executable=True)
        _add(zf, GRADING_REQUIREMENTS, grading_requirements(root / "requirements.txt").encode(),
             executable=False)
        _add(zf, STAMP, (json.dumps(stamp(root), sort_keys=True) + "\n").encode(), executable=False)
        for rel in files(root):
            _add(zf, rel.as_posix(), (root / rel).read_bytes(), executable=False)
    out.write_bytes(buffer.getvalue())
    return out
