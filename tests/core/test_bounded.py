"""YAML and JSON a student or a download may place are parsed within bounds
(autograder/core/bounded.py): an alias bomb, deep nesting, an oversized or non-UTF-8 text is one
line, and every valid small document reads as the standard parsers read it."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.classdata import discover
from autograder.core import bounded, course
from autograder.core.errors import UsageError
from shared import yamlfile


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """A metadata file of nested aliases: each level names the one before it ``width`` times, so
    the last stands for width**levels strings (a billion for 9 levels of 10)."""
    lines = ["l0: &l0 [" + ",".join(["x"] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def expanded(value) -> int:
    """How many values ``value`` holds with every shared reference counted again."""
    if isinstance(value, dict):
        return 1 + sum(expanded(k) + expanded(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(expanded(v) for v in value)
    return 1


def test_an_alias_bomb_is_refused_before_it_is_built():
    text = alias_bomb()
    assert len(text) < 600
    with pytest.raises(bounded.Refused, match="once its aliases are expanded"):
        bounded.load_yaml(text)


def test_the_bound_counts_what_the_plain_loader_would_hand_on():
    """A smaller bomb (4 levels of 10: 12,349 values with its keys, expanded) is what the plain
    loader hands on; under a bound of 5,000 it is refused, under 50,000 it reads the same."""
    text = alias_bomb(levels=4)
    plain = yamlfile.safe_load(text)
    assert expanded(plain) == 12_349
    with pytest.raises(bounded.Refused):
        bounded.load_yaml(text, bounded.Limits(max_nodes=5_000))
    assert bounded.load_yaml(text, bounded.Limits(max_nodes=50_000)) == plain


@pytest.mark.parametrize("text, words", [
    ("a:\n" + "".join("  " * i + "- \n" for i in range(1, 200)), "nested too deeply"),
    ("[" * 500 + "]" * 500, "nested too deeply"),
    (b"a: caf\xe9\n", "is not UTF-8 text"),
    ("a: [1,\n", "is not valid YAML"),
    ("x" * (2**20 + 1), "is larger than 1024 KiB"),
    ("a: !!python/object:os.system 1\n", "is not valid YAML"),
])
def test_hostile_yaml_is_one_line(text, words):
    with pytest.raises(bounded.Refused) as info:
        bounded.load_yaml(text)
    assert words in info.value.reason and "\n" not in info.value.reason


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a": NaN}', "holds NaN"),
    ('{"a": ' + "1" * 5000 + "}", "holds a number Python does not read"),
    (b'{"a": "\xff"}', "is not UTF-8 text"),
    ('{"a": 1', "is not valid JSON (line 1"),
])
def test_hostile_json_is_one_line(text, words):
    with pytest.raises(bounded.Refused) as info:
        bounded.load_json(text)
    assert words in info.value.reason and "\n" not in info.value.reason


def test_brackets_inside_strings_are_not_nesting():
    text = json.dumps({"a": "[" * 1000, "b": [[1]]})
    assert bounded.load_json(text) == json.loads(text)


def test_grade_all_refuses_a_gradescope_export_whose_metadata_is_an_alias_bomb(tmp_path):
    (tmp_path / "submission_1").mkdir()
    (tmp_path / "submission_1" / "bw.py").write_text("x = 1\n")
    (tmp_path / "submission_metadata.yml").write_text(alias_bomb())
    with pytest.raises(UsageError) as info:
        discover.discover(tmp_path, course.load().assignment("why17"))
    message = str(info.value)
    assert "submission_metadata.yml" in message and "aliases are expanded" in message and "\n" not in message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30)


@given(json_values)
def test_fuzz_small_json_reads_as_the_standard_parser_reads_it(value):
    text = json.dumps(value)
    assert bounded.load_json(text) == json.loads(text)


@given(st.binary(max_size=300) | st.text(alphabet="[]{}:,\"\\ 0a-\n", max_size=300))
def test_fuzz_any_bytes_are_json_or_one_refusal(data):
    try:
        bounded.load_json(data)
    except bounded.Refused as exc:
        assert "\n" not in exc.reason


@given(st.text(alphabet="[]{}:,-&*ab !'\"\n\t?|>#", max_size=300) | st.binary(max_size=200))
def test_fuzz_any_text_is_yaml_or_one_refusal(data):
    try:
        bounded.load_yaml(data)
    except bounded.Refused as exc:
        assert "\n" not in exc.reason


@given(st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=6))
def test_fuzz_alias_chains_are_refused_exactly_when_they_expand_past_the_bound(widths):
    lines = ["l0: &l0 x"] + [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]"
                             for i, width in enumerate(widths, start=1)]
    text = "\n".join(lines) + "\n"
    limit = 200
    plain = yamlfile.safe_load(text)
    try:
        data = bounded.load_yaml(text, bounded.Limits(max_nodes=limit))
    except bounded.Refused:
        assert expanded(plain) > limit
    else:
        assert data == plain and expanded(data) <= limit
