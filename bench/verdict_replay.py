"""Grade the adversarial set once, keeping what the GPU checks read; replay the verdict code on it.

    .venv/bin/python bench/verdict_replay.py capture DIR [--secrets s1,s4,s5] [--names a,b] [--busy N --beside N]
    .venv/bin/python bench/verdict_replay.py replay DIR OUT.json [--compare OLD.json] [--outcomes]
    .venv/bin/python bench/verdict_replay.py compare DIR OTHER_DIR

``capture`` grades each entry of autograder/lessons/why17/fixtures/adversarial/ as
bench/adversarial.py does (same lines, same summary), and writes one pickle per grading into DIR:
the results and the GPU checks' memo (every student call with its trace, every reference value).
``replay`` runs every GPU check of the code in this checkout on those memos, in this process and
in seconds: no student code runs. It prints how many verdicts differ from the captured grading
and, with ``--compare``, from an earlier replay (OUT.json of another checkout's code), each
difference on its own lines; exit 1 when one does. A call the code asks for that the capture
lacks shows as MISS. This is how a change to the judging code is proven verdict-preserving.
``--outcomes`` compares passed/failed alone (a change that rewords messages or moves a ratio, as a
new model of the same verdicts would, then shows only where a grade changes). ``--names`` takes
an entry's name with or without its kind (``good/datetime_now`` or ``datetime_now``).
``--busy`` and ``--beside`` load the machine while capturing, as bench/adversarial.py's do (busy
loops, a class graded round after round). ``compare`` lines up two captures' gradings (the same
entry under the same secret) and prints every check whose outcome differs, then how many do: a
capture made under load against one made on a quiet machine shows whether load moved a verdict.
Exit 1 when one differs, or when the two share no grading; 2 when a folder is missing.
"""
from __future__ import annotations

import argparse
import io
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Raised(Exception):
    """A student's exception that does not pickle, kept by type name and text."""

    def __init__(self, exc_type: str, text: str):
        super().__init__(text)
        self.exc_type = exc_type


def _kept(memo: dict) -> dict:
    """The memo without the verdicts (the replay computes them), every error picklable."""
    out = {}
    for key, value in memo.items():
        if key[0] in ("verdict", "diagnosis"):
            continue
        if key[0] not in ("settings", "prefetched") and not value[0]:
            try:
                _Unpickler.loads(pickle.dumps(value[1]))
            except Exception:  # any exception that does not round-trip is kept by its words
                exc = value[1]
                value = (False, Raised(getattr(exc, "exc_type", type(exc).__name__), str(exc)))
        out[key] = value
    return out


def capture(dest: Path, secrets: list[str], names: set[str], busy: int = 0, beside: int = 0) -> None:
    from autograder.core import course, lesson
    from autograder.gpu import checks
    from autograder.lessons.why17.fixtures import adversarial
    from autograder.sandbox import forkserver
    from bench.adversarial import Load, gradings

    memos: list[dict] = []
    start = checks.ContextRunner.__init__

    def keep_memo(runner, ctx):
        start(runner, ctx)
        if not any(m is runner.memo for m in memos):
            memos.append(runner.memo)

    checks.ContextRunner.__init__ = keep_memo
    dest.mkdir(parents=True, exist_ok=True)
    entries = [e for e in adversarial.entries() if not names or {e.name, f"{e.kind}/{e.name}"} & names]
    forkserver.start(**lesson.server_imports(course.load().assignment()))
    right, started = 0, time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp, Load(busy, beside, Path(tmp) / "beside") as load:
            for entry, secret, results, ok, what in gradings(entries, secrets, adversarial.HERE, Path(tmp)):
                right += ok
                print(f"{'ok ' if ok else 'BAD'} {entry.kind}/{entry.name:34} {what} [{secret}]", flush=True)
                record = {"only": sorted(adversarial.checks(entry)), "memos": [_kept(m) for m in memos],
                          "tests": {t["check"]: (t["status"], t["score"], t["output"]) for t in results["tests"]}}
                memos.clear()          # the next grading's memos only
                with open(dest / f"{entry.kind}+{entry.name}+{secret}.pkl", "wb") as fh:
                    pickle.dump(record, fh)
            load.report()
    finally:
        forkserver.stop()
    print(f"{right} of {len(entries) * len(secrets)} verdicts as expected ({time.monotonic() - started:.0f} s)")


class _Unpickler(pickle.Unpickler):
    """Loads an exception whose class wants more arguments than it keeps (the grader's
    StudentRaised) as a subclass of it with the plain exception's constructor."""

    def find_class(self, module, name):
        cls = super().find_class(module, name)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            return type(name, (cls,), {"__init__": lambda self, *args: BaseException.__init__(self, *args)})
        return cls

    @classmethod
    def loads(cls, data: bytes):
        return cls(io.BytesIO(data)).load()


class _Replayed:
    """A runner that answers only from the captured memo."""

    def __init__(self, memo: dict):
        self.memo = memo

    def student_traced(self, module, function, *args, sim, **kwargs):
        raise LookupError(f"MISS: {function}{args} was not captured")

    def reference(self, module, function, *args, sim, **kwargs):
        raise LookupError(f"MISS: the reference's {function}{args} was not captured")

    @staticmethod
    def did_not_return(error: Exception) -> bool:
        """The grader's runner's test (autograder/gpu/checks.py), on a captured error: loaded as a
        subclass of its class, or kept by its type's name (``Raised``)."""
        names = {c.__name__ for c in type(error).__mro__} | {getattr(error, "exc_type", "")}
        return bool(names & {"StudentTimeout", "StudentCrashed"})


def replay(folder: Path) -> dict:
    """name -> {"replay": check -> [status, message, ratio], "graded": check -> [status, message]}."""
    from autograder.lessons.why17.checks.gpu import VERDICTS

    out = {}
    for path in sorted(folder.glob("*.pkl")):
        with open(path, "rb") as fh:
            record = _Unpickler(fh).load()
        memo = {k: v for m in record["memos"] for k, v in m.items()}
        profile, seed = next(k[1:3] for k in memo if k[0] == "student")
        got = {}
        for vid in record["only"]:
            try:
                v = VERDICTS[vid](_Replayed(memo), profile, seed)
                ratio = None if v.ratio is None else round(v.ratio, 12)
                got[vid] = ["passed" if v.passed else "failed", v.message, ratio]
            except Exception as exc:  # the verdict raised: kept as it is
                got[vid] = ["raised", f"{type(exc).__name__}: {exc}"[:300], None]
        out[path.stem] = {"replay": got, "graded": {c: [t[0], t[2]] for c, t in record["tests"].items()}}
    return out


def graded(folder: Path) -> dict[str, dict[str, str]]:
    """Each captured grading in ``folder`` (file stem) -> check -> the status it was graded."""
    out = {}
    for path in sorted(folder.glob("*.pkl")):
        with open(path, "rb") as fh:
            out[path.stem] = {check: test[0] for check, test in _Unpickler(fh).load()["tests"].items()}
    return out


def compare(folder: Path, other: Path) -> int:
    """Print each check whose graded outcome differs between two captures' common gradings; 1 when
    one does or none is common, else 0."""
    missing = [str(d) for d in (folder, other) if not d.is_dir()]
    if missing:
        print(f"verdict_replay compare: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    a, b = graded(folder), graded(other)
    common = sorted(set(a) & set(b))
    moved = [f"{name} {check}: {a[name].get(check)} in {folder}, {b[name].get(check)} in {other}"
             for name in common for check in sorted(set(a[name]) | set(b[name]))
             if a[name].get(check) != b[name].get(check)]
    print("\n".join(moved))
    checks = sum(len(a[name]) for name in common)
    print(f"{len(common)} gradings in both ({len(a)} and {len(b)} captured), {checks} checks, {len(moved)} differ")
    return 1 if moved or not common else 0


def differences(new: dict, old: dict | None, outcomes: bool = False) -> list[str]:
    """One line per verdict of ``new`` that differs from its grading (or from ``old``'s replay);
    with ``outcomes``, only where passed/failed differs."""
    lines = []
    for name in sorted(new if old is None else set(new) & set(old)):
        for vid, (status, message, *ratio) in sorted(new[name]["replay"].items()):
            if old is None:
                graded = new[name]["graded"].get(vid, [None, ""])
                same = status == graded[0] and (outcomes or status not in ("passed", "failed")
                                                or message.strip() in graded[1])
            else:
                was = old[name]["replay"].get(vid)
                same = was == [status, message, *ratio] or (outcomes and was is not None and was[0] == status)
            if not same:
                was = new[name]["graded"].get(vid) if old is None else old[name]["replay"].get(vid)
                lines.append(f"{name} {vid}\n  was: {was}\n  now: {[status, message, *ratio]}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture", help="grade the set and keep each grading's memo in DIR")
    c.add_argument("dir", type=Path)
    c.add_argument("--secrets", default="s1,s4,s5", help="simulator secrets, comma-separated")
    c.add_argument("--names", default="", help="grade only these entries (comma-separated)")
    c.add_argument("--busy", type=int, default=0, help="busy loops to keep running meanwhile")
    c.add_argument("--beside", type=int, default=0, help="grade a class of this many students beside, again and again")
    k = sub.add_parser("compare", help="the checks two captures graded differently")
    k.add_argument("dir", type=Path)
    k.add_argument("other", type=Path)
    r = sub.add_parser("replay", help="run this checkout's GPU checks on the memos in DIR")
    r.add_argument("dir", type=Path)
    r.add_argument("out", type=Path, help="where to write the replayed verdicts (JSON)")
    r.add_argument("--compare", type=Path, help="an earlier replay's JSON to compare with")
    r.add_argument("--outcomes", action="store_true", help="compare passed/failed only, not messages or ratios")
    args = p.parse_args(argv)
    if args.command == "capture":
        capture(args.dir, [s for s in args.secrets.split(",") if s], set(filter(None, args.names.split(","))),
                args.busy, args.beside)
        return 0
    if args.command == "compare":
        return compare(args.dir, args.other)
    new = replay(args.dir)
    args.out.write_text(json.dumps(new, indent=1, sort_keys=True), encoding="utf-8")
    count = sum(len(r["replay"]) for r in new.values())
    found = differences(new, None, args.outcomes)
    print("\n".join(found[:40]))
    print(f"{len(new)} gradings replayed, {count} verdicts, {len(found)} differ from the captured grading")
    if args.compare:
        old = json.loads(args.compare.read_text(encoding="utf-8"))
        changed = differences(new, old, args.outcomes)
        print("\n".join(changed[:40]))
        print(f"{len(changed)} verdicts differ from {args.compare} ({len(set(new) & set(old))} gradings in both)")
        found += changed
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
