"""The GPU checks' table (shared/lessons/why17/gpu/table.yml): data the checks read, every
threshold with its reason, and a file that names an unknown function or gives a threshold that is
no number refused with one line naming the file and the field."""
from __future__ import annotations

import pytest
import yaml

from shared import yamlfile
from shared.lessons.why17.gpu import rubric


def _written(tmp_path, monkeypatch, change) -> None:
    table = yamlfile.safe_load(rubric.TABLE.read_text(encoding="utf-8"))
    change(table)
    path = tmp_path / "table.yml"
    path.write_text(yaml.safe_dump(table), encoding="utf-8")
    monkeypatch.setattr(rubric, "TABLE", path)


def test_every_threshold_has_its_reason_and_the_checks_read_them():
    limits = yamlfile.safe_load(rubric.TABLE.read_text(encoding="utf-8"))["thresholds"]
    names = [k for k in limits if not k.endswith("_reason")]
    assert names and all(limits.get(f"{k}_reason") for k in names)
    assert (rubric.SYNC_BOUNDS, rubric.CACHE_MULTIPLE, rubric.ITERS) == (
        tuple(limits["sync_bounds"]), limits["cache_multiple"], limits["iters"])


def test_a_check_naming_an_unknown_function_is_refused_naming_the_file(tmp_path, monkeypatch):
    _written(tmp_path, monkeypatch, lambda t: t["judges"]["sync_present"].append("copy_bandwith"))
    with pytest.raises(ValueError, match=r"table\.yml: .*copy_bandwith") as raised:
        rubric._table()
    assert "\n" not in str(raised.value)


def test_a_threshold_that_is_no_number_is_refused_naming_it(tmp_path, monkeypatch):
    _written(tmp_path, monkeypatch, lambda t: t["thresholds"].update(warmup_min="0.9"))
    with pytest.raises(ValueError, match=r"table\.yml: .*warmup_min"):
        rubric._table()
