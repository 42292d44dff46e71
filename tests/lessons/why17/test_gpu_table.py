"""The GPU checks' table (shared/lessons/why17/gpu/table.yml): data the checks read, every
threshold with its reason, and a file that names an unknown function or gives a threshold that is
no number refused with one line naming the file and the field."""
from __future__ import annotations

import pytest
import yaml

from shared import yamlfile
from shared.lessons.why17.gpu import factors, rubric


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
    assert (rubric.LIMITS.sync_bounds, rubric.LIMITS.cache_multiple, rubric.LIMITS.iters) == (
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


def test_a_slip_owned_by_an_unknown_check_or_with_no_message_is_refused_naming_it(tmp_path, monkeypatch):
    _written(tmp_path, monkeypatch, lambda t: t["owners"].update(host_link=["bytes_counted_once"]))
    with pytest.raises(ValueError, match=r"table\.yml: .*bytes_counted_once"):
        rubric._table()
    _written(tmp_path, monkeypatch, lambda t: t["owners"].update(hots_link=["bytes_counted_twice"]))
    with pytest.raises(ValueError, match=r"table\.yml: .*hots_link"):
        rubric._table()


@pytest.mark.parametrize("row", [[1, 0, "divided by zero"], ["1e9", 1, "a string"], [1, 1]])
def test_a_factor_that_is_no_numerator_denominator_and_words_is_refused_naming_the_file(tmp_path, row):
    path = tmp_path / "factors.yml"
    path.write_text(yaml.safe_dump({"gbs_units": [[1, 1, ""], row]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"factors\.yml: an entry is not \[numerator, denominator, words\]") as raised:
        factors.tables(path)
    assert "\n" not in str(raised.value)


def test_the_factors_read_from_the_file_are_exact_quotients():
    assert factors.GBS_UNITS[1e9 / 2**30].startswith("GiB/s") and factors.TFLOPS_UNITS[1e12 / 2**40]
    assert list(factors.BYTE_FACTORS) == [0.5, 1.0, 2.0] and factors.BYTE_FACTORS[1.0] == ""
