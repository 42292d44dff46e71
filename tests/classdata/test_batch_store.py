"""The output store: content hashes, atomic writes, what counts as done, one run per OUT."""
from __future__ import annotations

import json
import os
import shutil
import zipfile

import pytest

from autograder.classdata import store
from autograder.classdata.discover import Member, Submission
from autograder.core.errors import UsageError


def _sub(path, name="alice"):
    return Submission(student=name, path=path, members=(Member(name),))


def test_folder_hash_follows_content_and_names_not_caches(tmp_path):
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "bw.py").write_text("x = 1\n")
    first = store.content_hash(_sub(folder))
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bw.cpython-311.pyc").write_bytes(b"\0\1")
    (folder / ".DS_Store").write_bytes(b"\0")
    assert store.content_hash(_sub(folder)) == first
    (folder / "bw.py").write_text("x = 2\n")
    changed = store.content_hash(_sub(folder))
    assert changed != first
    (folder / "bw.py").rename(folder / "flops.py")
    assert store.content_hash(_sub(folder)) not in (first, changed)


def test_zip_hash_follows_its_bytes(tmp_path):
    path = tmp_path / "bob.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bw.py", "x = 1\n")
    first = store.content_hash(_sub(path, "bob"))
    assert store.content_hash(_sub(path, "bob")) == first
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("predict.py", "y = 2\n")
    assert store.content_hash(_sub(path, "bob")) != first


def test_atomic_write_replaces_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "deep" / "results.json"
    store.atomic_write(target, "old")
    store.atomic_write(target, "new")
    assert target.read_text() == "new"
    assert os.listdir(target.parent) == ["results.json"]


def test_done_only_with_matching_marker_hash_key_and_results(tmp_path):
    with store.Store(tmp_path / "out", key="k1") as st:
        assert not st.is_done("alice", "h1")
        st.save("alice", "h1", {"score": 1}, "<html></html>", seconds=2.5, source="/x/alice")
        assert st.is_done("alice", "h1")
        assert not st.is_done("alice", "h2")              # content changed
        assert json.loads((st.folder("alice") / "results.json").read_text()) == {"score": 1}
        assert (st.folder("alice") / "feedback.html").read_text() == "<html></html>"
        assert st.record("alice").seconds == 2.5
        (st.folder("alice") / "results.json").unlink()    # a lost results file: regrade
        assert not st.is_done("alice", "h1")
    with store.Store(tmp_path / "out", key="k2") as st:    # course.yml or device changed
        assert not st.is_done("alice", "h1")


def test_forget_and_a_corrupt_marker_mean_not_done(tmp_path):
    with store.Store(tmp_path, key="k") as st:
        st.save("bob", "h", {}, "", seconds=0, source="")
        st.forget("bob")
        assert not st.is_done("bob", "h")
        st.save("bob", "h", {}, "", seconds=0, source="")
        (st.folder("bob") / store.MARKER).write_text("{not json")
        assert st.record("bob") is None and not st.is_done("bob", "h")


def test_two_runs_cannot_share_one_out(tmp_path):
    with store.Store(tmp_path, key="k"):
        with pytest.raises(UsageError, match="another grade-all run"):
            store.Store(tmp_path, key="k")
    with store.Store(tmp_path, key="k"):   # released on close
        pass


def test_out_that_is_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(UsageError, match="out"):
        store.Store(tmp_path / "out", key="k")


def test_damage_names_the_file_and_heal_moves_it_aside_never_deleting(tmp_path):
    with store.Store(tmp_path / "out", key="k") as st:
        st.save("alice", "h", {"score": 1}, "<html></html>", seconds=0, source="")
        folder = st.folder("alice")
        assert st.damage("alice") is None and st.damage("nobody") is None   # no files yet: not damage
        (folder / store.MARKER).unlink()
        (folder / store.MARKER).mkdir()
        assert st.damage("alice") == f"{folder / store.MARKER} is a folder, not a file"
        assert st.heal("alice") == [folder / ".grade-all.json.damaged"]
        st.save("alice", "h", {"score": 1}, "<html></html>", seconds=0, source="")
        assert st.damage("alice") is None and st.is_done("alice", "h")
        (folder / "results.json").write_text('{"score": ')                  # cut short
        assert "results.json does not parse" in st.damage("alice") and not st.is_done("alice", "h")
        assert st.heal("alice") == []                                       # a file: rewritten, not moved
        shutil.rmtree(folder)
        for _ in range(2):                                                   # a file where the folder goes
            folder.write_text("not a folder")
            assert st.damage("alice") == f"{folder} is not a folder"
            st.heal("alice")
        assert sorted(p.name for p in st.out.glob("alice*")) == ["alice.damaged", "alice.damaged-2"]
        assert (st.out / "alice.damaged-2").read_text() == "not a folder"
        st.save("alice", "h", {"score": 2}, "", seconds=0, source="")
        assert st.results("alice") == {"score": 2}
