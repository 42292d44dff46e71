"""Reading numeric answers as people type them (shared/quiz/numbers.py): one example per form, what
is refused and with which hint, and laws over drawn answers.

The laws build each answer's text from digits drawn by hypothesis and compare with ``float`` of the
plain digits (the oracle), never with the parser itself. The profile is derandomized, without a
deadline or an example database, so a run never depends on luck or load.
"""
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.quiz import drills, numbers
from tests.helpers.paths import ROOT

LAWS = settings(derandomize=True, deadline=None, database=None, max_examples=150)


# --- One example per form -------------------------------------------------------------------------

@pytest.mark.parametrize("text, unit, value", [
    ("5.8k", "tokens/s", 5800), ("5.8 K", "tokens/s", 5800), ("1.4M", "tokens/s", 1.4e6),
    ("5 thousand", "tokens/s", 5000), ("70 bn", "x", 70e9), ("70 billion", "x", 70e9),
    ("5,832", "tokens/s", 5832), ("1,371.4", "tokens/s", 1371.4), ("1,000,000", "x", 1e6),
    ("5 832", "tokens/s", 5832), ("5\u202f832", "tokens/s", 5832), ("5\u00a0832", "tokens/s", 5832),
    ("5_832", "tokens/s", 5832), ("12 345 678", "x", 12345678),
    ("1.4e3", "tokens/s", 1400), ("1.4E-3", "s", 0.0014), ("1.4 x 10^3", "tokens/s", 1400),
    ("1.4×10^3", "tokens/s", 1400), ("1.4*10**-3", "s", 0.0014),
    ("about 43", "tokens/s", 43), ("~43", "tokens/s", 43), ("≈ 43", "tokens/s", 43), ("roughly 43", "tokens/s", 43),
    ("approx. 43", "tokens/s", 43), ("Around 43", "tokens/s", 43),
    ("43 tok/s", "tokens/s", 43), ("43 tokens/s", "tokens/s", 43), ("43 tokens per second", "tokens/s", 43),
    ("43 t/s", "tokens/s", 43), ("~43 tok/sec", "tokens/s", 43),
    ("3.35 TB/s", "GB/s", 3350), ("3,350 GB/s", "GB/s", 3350), ("3.35 tb/s", "GB/s", 3350),
    ("3.12 TiB/s", "GB/s", 3.12 * 2**40 / 1e9), ("16 GiB", "GB", 16 * 2**30 / 1e9), ("0.0588 s", "ms", 58.8),
    ("58.8 ms", "ms", 58.8), ("131,072 bytes", "KiB", 128), ("128 KiB", "KiB", 128), ("125 TFLOPS", "TFLOP/s", 125),
    ("458 FLOPs per byte", "FLOPs/byte", 458), ("458 streams", "streams", 458), ("0.22%", "%", 0.22),
    ("0.0022x", "%", 0.22), ("2.5x", "x", 2.5), ("5.8k GB", "GB", 5800),
    ("1/2", "x", 0.5), ("273/16", "tokens/s", 273 / 16), ("273 / 16.06 tok/s", "tokens/s", 273 / 16.06),
    ("17", "tokens/s", 17), ("17.", "tokens/s", 17), (".5", "x", 0.5), ("-3", "x", -3), ("\u22123", "x", -3),
])
def test_each_form_people_type_is_read(text, unit, value):
    assert numbers.parse(text, unit) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text, unit, hint", [
    ("", "tokens/s", "the line is empty: type a number, such as 17, 1,371, 5.8k or 1.4e3"),
    ("   ", "tokens/s", "the line is empty"),
    ("lots", "tokens/s", "expected a number such as 17, 1,371, 5.8k or 1.4e3; got 'lots'"),
    ("about", "tokens/s", "expected a number such as"),
    ("5 83", "tokens/s", "expected one number; got '5 83' (two numbers? a space groups thousands only in threes"),
    ("43 44", "tokens/s", "expected one number; got '43 44'"),
    ("40-45", "tokens/s", "expected one number; got '40-45' (for a range, pick the value you would say)"),
    ("5,8", "tokens/s", "the comma is not a thousands separator (groups of three digits); for a decimal, write a "
                        "point: 5.8"),
    ("1,3714", "tokens/s", "the comma is not a thousands separator"),
    ("43 GB", "tokens/s", "'GB' in '43 GB' is a size; this question wants a token rate in tokens/s"),
    ("70B", "tokens/s", "(B is bytes; for billions write bn or e9)"),
    ("3.35 TB/s", "tokens/s", "is a bandwidth; this question wants a token rate"),
    ("17 furlongs", "tokens/s", "'furlongs' after the number is not a unit the quiz knows; answer in tokens/s"),
    ("5m", "s", "(is it milli or mega? write ms or M)"),
    ("1/0", "x", "'1/0' divides by zero"),
    ("1e999", "x", "is too large"),
    ("inf", "x", "expected a number"),
])
def test_what_is_refused_gets_a_one_line_hint(text, unit, hint):
    with pytest.raises(ValueError) as info:
        numbers.parse(text, unit)
    assert hint in str(info.value)
    assert "\n" not in str(info.value)


def test_a_question_in_a_unit_the_parser_does_not_know_is_a_bug_not_a_refusal():
    with pytest.raises(KeyError):
        numbers.parse("17", "furlongs")


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_every_drill_asks_in_a_unit_the_parser_reads(kind):
    import random
    unit = kind(random.Random(0)).unit
    assert numbers.parse(f"17 {unit}", unit) == 17
    assert numbers.parse("17", unit) == 17


# --- Laws over drawn answers ------------------------------------------------------------------------

@st.composite
def decimals(draw, max_int=10**12):
    """(whole part, fraction digits): the digits of a non-negative decimal number as typed."""
    whole = draw(st.integers(0, max_int))
    fraction = draw(st.text(alphabet="0123456789", max_size=4))
    return whole, fraction


def plain(whole: int, fraction: str) -> str:
    return f"{whole}.{fraction}" if fraction else str(whole)


SEPARATORS = {",": ",", "space": " ", "thin space": "\u2009", "narrow no-break space": "\u202f", "underscore": "_"}
APPROX = ("", "about ", "~", "≈ ", "roughly ", "approximately ")


@LAWS
@given(decimals(), st.sampled_from(sorted(SEPARATORS)), st.sampled_from(APPROX))
def test_thousands_grouped_any_way_read_as_the_plain_digits(number, separator, approx):
    whole, fraction = number
    grouped = f"{whole:,}".replace(",", SEPARATORS[separator]) + (f".{fraction}" if fraction else "")
    assert numbers.parse(approx + grouped, "tokens/s") == float(plain(whole, fraction))


@LAWS
@given(decimals(max_int=10**6), st.integers(-30, 30), st.sampled_from(("e", "E", " x 10^", "×10^", "*10**")))
def test_an_exponent_scales_by_its_power_of_ten(number, power, spelling):
    mantissa = plain(*number)
    text = f"{mantissa}{spelling}{power}"
    assert numbers.parse(text, "x") == pytest.approx(float(f"{mantissa}e{power}"), rel=1e-12)


@LAWS
@given(decimals(max_int=10**6), st.sampled_from(sorted(numbers.UNITS)), st.sampled_from(sorted(numbers.UNITS)))
def test_a_unit_typed_converts_into_the_questions_unit_or_is_refused(number, typed, asked):
    text = f"{plain(*number)} {typed}"
    (typed_kind, typed_size), (asked_kind, asked_size) = numbers.UNITS[typed], numbers.UNITS[asked]
    if typed_kind != asked_kind:
        with pytest.raises(ValueError, match="this question wants"):
            numbers.parse(text, asked)
    else:
        assert numbers.parse(text, asked) == pytest.approx(float(plain(*number)) * typed_size / asked_size,
                                                           rel=1e-12)


@LAWS
@given(decimals(max_int=10**6), st.sampled_from((("k", 1e3), ("K", 1e3), ("M", 1e6), (" thousand", 1e3),
                                                 (" million", 1e6), (" bn", 1e9), (" trillion", 1e12))))
def test_a_multiplier_multiplies(number, multiplier):
    word, factor = multiplier
    assert numbers.parse(plain(*number) + word, "tokens/s") == pytest.approx(float(plain(*number)) * factor,
                                                                            rel=1e-12)


@LAWS
@given(st.integers(0, 10**6), st.integers(1, 10**6))
def test_a_fraction_of_two_numbers_is_its_value(top, bottom):
    assert numbers.parse(f"{top}/{bottom}", "x") == pytest.approx(top / bottom, rel=1e-12)


@LAWS
@given(st.integers(1, 999), st.sampled_from((1, 2, 4, 5)), st.data())
def test_a_comma_that_does_not_group_three_digits_is_refused(head, width, data):
    tail = data.draw(st.text(alphabet="0123456789", min_size=width, max_size=width))
    with pytest.raises(ValueError, match="comma is not a thousands separator"):
        numbers.parse(f"{head},{tail}", "tokens/s")


@LAWS
@given(st.floats(min_value=1e-3, max_value=1e12), st.sampled_from(("tokens/s", "GB", "ms", "x")))
def test_the_quizs_own_printed_numbers_read_back_within_their_rounding(value, unit):
    shown = drills.fmt(value)
    assert numbers.parse(shown, unit) == pytest.approx(value, rel=5e-3)
    assert numbers.parse(f"{shown} {unit}", unit) == pytest.approx(value, rel=5e-3)


@LAWS
@given(st.text(max_size=40))
def test_any_text_is_a_finite_number_or_a_one_line_refusal(text):
    try:
        value = numbers.parse(text, "tokens/s")
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert math.isfinite(value)
        assert re.search(r"\d", text), "a number was read from text without a digit"


@LAWS
@given(st.text(alphabet=st.characters(blacklist_categories=("Nd",)), max_size=30))
def test_text_without_a_digit_is_always_refused(text):
    with pytest.raises(ValueError):
        numbers.parse(text, "tokens/s")


# --- The page that documents the forms -------------------------------------------------------------

PAGE = ROOT / "docs" / "quiz.md"
QUESTION_UNITS = ("tokens/s", "x", "GB/s", "GB", "ms", "KiB")


def typing_section() -> str:
    return PAGE.read_text(encoding="utf-8").split("## Typing a number", 1)[1].split("\n## ", 1)[0]


def test_every_form_the_page_shows_as_read_is_read():
    rows = re.findall(r"^\| (`.+?) \| .+ \|$", typing_section(), re.M)
    forms = [f for row in rows for f in re.findall(r"`([^`]+)`", row)]
    assert len(forms) >= 20
    for form in forms:
        read = []
        for unit in QUESTION_UNITS:
            try:
                read.append(numbers.parse(form, unit))
            except ValueError:
                pass
        assert read, f"docs/quiz.md shows {form!r} as read, but no question unit reads it"


@pytest.mark.parametrize("form", ["lots", "43 44", "40-45", "5 83", "5,8", "43 GB", "70B"])
def test_every_form_the_page_says_is_refused_is_refused(form):
    assert f"`{form}`" in typing_section()
    with pytest.raises(ValueError):
        numbers.parse(form, "tokens/s")
