"""Fingerprint each submission's code and score every pair of submissions, file by file.

copydetect (Pygments tokens, names and strings replaced by placeholders, winnowed k-gram hashes)
does the fingerprinting and the overlap; this module decides what is compared: the Python files
the assignment asks for (same name against same name), minus every k-gram of the boilerplate
(the stubs and public tests of assignments/<folder>/, which every student starts from, and the
checks and return lines those stubs dictate: ``dictated``).

A pair's ``similarity`` is the share of both sides' fingerprinted tokens that the other side
also has, over the files both submitted: (overlap in a + overlap in b) / (tokens of a + tokens
of b), from 0 to 1.
"""
from __future__ import annotations

import functools
import io
import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path

from autograder.classdata.discover import JUNK_NAMES, SEARCH_DEPTH, Submission, gradable_names
from autograder.core import handin, ziplimits
from autograder.similarity import dictated

#: copydetect's noise threshold: matches shorter than this many filtered characters are ignored.
NOISE_T = 25
#: Winnowing window: 1 keeps every k-gram. copydetect hashes k-grams with Python's hash(), which
#: is salted per process (PYTHONHASHSEED), so winnowing (window > 1) would pick different k-grams
#: in every run and the same class would get a different report each time. Keeping all of them
#: makes the report reproducible and finds every match of NOISE_T characters or more; the files
#: of this assignment are small (hundreds of tokens), so it costs little.
WINDOW = 1
#: Bytes of one file read at most (a bigger file is cut: nobody writes that much by hand).
MAX_FILE_BYTES = 512 * 1024


@dataclass
class FileMatch:
    """One file both submissions hold: the share of each side's tokens matched, the matched
    tokens, and copydetect's slices (character ranges of the matching regions) of each side."""

    name: str
    share_a: float
    share_b: float
    tokens_a: int
    tokens_b: int
    overlap_a: int
    overlap_b: int
    slices_a: object = None
    slices_b: object = None


@dataclass
class Pair:
    a: str
    b: str
    similarity: float
    files: list[FileMatch] = field(default_factory=list)


def code_files(sub: Submission, names) -> dict[str, str]:
    """The text of each file of ``names`` in ``sub`` (a folder or zip), found up to SEARCH_DEPTH
    folders deep, caches and macOS droppings skipped; the shallowest copy wins."""
    found: dict[str, tuple[int, str]] = {}

    def keep(rel: str, read):
        parts = rel.split("/")
        if parts[-1] not in names or len(parts) > SEARCH_DEPTH or any(p in JUNK_NAMES for p in parts):
            return
        if parts[-1] in found and found[parts[-1]][0] <= len(parts):
            return
        try:
            with read() as fh:   # at most MAX_FILE_BYTES of it, whatever the file or entry claims
                data = fh.read(MAX_FILE_BYTES)
        except ziplimits.READ_ERRORS:
            return
        found[parts[-1]] = (len(parts), data.decode("utf-8", "replace"))

    path = handin.source(sub.path, names)   # a zip one folder deeper, as grading finds it
    try:
        if path.is_file():
            with ziplimits.open_zip(path) as zf:
                for info in zf.infolist():
                    if not info.is_dir():
                        keep(info.filename, lambda i=info: zf.open(i))
        elif path.is_dir():
            for p in path.rglob("*.py"):
                if p.is_file() and not p.is_symlink():
                    keep(p.relative_to(path).as_posix(), lambda p=p: open(p, "rb"))
    except ziplimits.READ_ERRORS:
        pass
    return {name: text for name, (_depth, text) in found.items()}


def python_names(asg) -> tuple[str, ...]:
    """The Python files of ``asg`` a submission may hold (bw.py, flops.py, ...)."""
    return tuple(n for n in gradable_names(asg) if n.endswith(".py"))


def boilerplate_files(asg) -> list[Path]:
    """The release's code every student starts from: the stubs and the public tests."""
    root = asg.assignments_dir
    return sorted(p for p in root.rglob("*.py") if p.is_file() and not any(
        part in JUNK_NAMES for part in p.relative_to(root).parts))


def _fingerprint(name: str, text: str, boilerplate: frozenset = frozenset()):
    """copydetect's fingerprint of ``text`` with every boilerplate k-gram removed (done here, by
    set membership: copydetect's own removal assumes unique hashes, which window 1 does not give)."""
    from copydetect import CodeFingerprint
    from copydetect.utils import get_token_coverage
    fp = CodeFingerprint(name, NOISE_T, WINDOW, filter=True, language="python", fp=io.StringIO(text))
    if boilerplate:
        fp.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in boilerplate}
        fp.hashes = set(fp.hash_idx)
        fp.token_coverage = get_token_coverage(fp.hash_idx, NOISE_T, len(fp.filtered_code))
    return fp


def boilerplate_hashes(asg) -> frozenset:
    """Every k-gram hash of the boilerplate: the stubs and public tests, and the code the stubs
    dictate (their checks and docstrings' return lines, written out by ``dictated``)."""
    stamps = []
    for path in boilerplate_files(asg):
        try:
            info = path.stat()
        except OSError:
            continue
        stamps.append((path, info.st_mtime_ns, info.st_size))
    return _hashes_of(tuple(stamps))


@functools.lru_cache(maxsize=4)
def _hashes_of(stamps: tuple) -> frozenset:
    """The hashes of the files in ``stamps`` ((path, mtime, size), so an edited stub is read again)."""
    hashes: set = set()
    for path, _mtime, _size in stamps:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        hashes |= _fingerprint(path.name, source).hashes
        written = dictated.text(source)
        if written:
            hashes |= _fingerprint(path.name, written).hashes
    return frozenset(hashes)


def fingerprints(subs, asg) -> dict[str, dict]:
    """student -> {file name: CodeFingerprint} for every submission with code."""
    names = python_names(asg)
    plate = boilerplate_hashes(asg)
    out = {}
    for sub in subs:
        mine = fingerprint_texts(code_files(sub, names), plate)
        if mine:
            out[sub.student] = mine
    return out


def fingerprint_texts(files: dict[str, str], plate: frozenset) -> dict:
    """file name -> CodeFingerprint of each of ``files`` (name -> code) that holds code beyond
    the boilerplate hashes ``plate``."""
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))
    mine = {n: _fingerprint(n, text, plate) for n, text in sorted(files.items())}
    return {n: fp for n, fp in mine.items() if fp.token_coverage > 0}


def compare_pair(a: str, b: str, fa: dict, fb: dict, keep_slices: bool = False) -> Pair:
    """The similarity of two submissions' fingerprints (file name -> CodeFingerprint)."""
    from copydetect import compare_files
    matches, num, den = [], 0.0, 0.0
    for name in sorted(set(fa) & set(fb)):
        x, y = fa[name], fb[name]
        tokens_a, tokens_b = int(x.token_coverage), int(y.token_coverage)
        den += tokens_a + tokens_b
        if not (x.hashes & y.hashes):
            continue
        overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(x, y)
        if not overlap:
            continue
        overlap_a = int(round(float(share_a) * tokens_a))
        overlap_b = int(round(float(share_b) * tokens_b))
        num += overlap_a + overlap_b
        matches.append(FileMatch(name, float(share_a), float(share_b), tokens_a, tokens_b,
                                 overlap_a, overlap_b, slices_a if keep_slices else None,
                                 slices_b if keep_slices else None))
    return Pair(a, b, (num / den) if den else 0.0, matches)


def rank(prints: dict[str, dict]) -> list[Pair]:
    """Every pair of submissions, most similar first (ties by name)."""
    pairs = [compare_pair(a, b, prints[a], prints[b]) for a, b in itertools.combinations(sorted(prints), 2)]
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return pairs
