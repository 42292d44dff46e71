"""The generated class (autograder/lessons/why17/fixtures/classes.py) for the grade-all tests and bench/.

Every edit really applies (a generator that silently wrote the reference would make every count
wrong), a stale edit fails loudly, and make_class writes the folders and zips it reports.
"""
from __future__ import annotations

import zipfile

import pytest

from autograder.lessons.why17.fixtures import mistake
from autograder.lessons.why17.fixtures.classes import (
    EDITS,
    KINDS,
    MIX_200,
    MODULES,
    SOLUTION,
    make_class,
    ta_kinds,
    write_student,
)


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_each_edit_changes_exactly_one_place(tmp_path, kind):
    entry = write_student(tmp_path, "x", kind)
    file, old, new = EDITS[kind]
    text, reference = (entry / file).read_text(), (SOLUTION / file).read_text()
    assert text != reference
    assert len(text.splitlines()) - len(reference.splitlines()) == len(new.splitlines()) - len(old.splitlines())
    assert new.splitlines()[-1].strip() in text


def test_a_stale_edit_fails_naming_the_kind(tmp_path, monkeypatch):
    monkeypatch.setitem(EDITS, "bytes_once", ("bw.py", "return 3 * n_bytes", "return n_bytes"))
    with pytest.raises(mistake.MistakeError, match=r"EDITS\['bytes_once'\]: 'old' 'return 3 \* n_bytes' occurs 0"):
        write_student(tmp_path, "x", "bytes_once")


def test_make_class_writes_folders_zips_and_the_kinds_it_reports(tmp_path):
    kinds = make_class(tmp_path / "class", len(KINDS))
    assert sorted(kinds.values()) == sorted(KINDS)
    for name, kind in kinds.items():
        if kind.endswith("_zip") or kind == "broken_zip":
            assert (tmp_path / "class" / f"{name}.zip").is_file()
        else:
            assert (tmp_path / "class" / name).is_dir()
    good = [n for n, k in kinds.items() if k == "reference_zip"][0]
    with zipfile.ZipFile(tmp_path / "class" / f"{good}.zip") as zf:
        assert sorted(zf.namelist()) == sorted(MODULES)


def test_ta_class_keeps_mix_200s_proportions_and_spreads_the_hangs():
    kinds = ta_kinds(200)
    assert {k: kinds.count(k) for k in set(kinds)} == MIX_200
    hangs = [i for i, k in enumerate(kinds) if k == "hang"]
    assert max(hangs) - min(hangs) >= 50, hangs
    assert set(MIX_200) <= set(KINDS)
