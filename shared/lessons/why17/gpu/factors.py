"""What explains a ratio of the student's number to the reference's, read from factors.yml:
factor -> the slip in the lesson's words ("" for none), one table per count and per unit."""
from __future__ import annotations

from pathlib import Path

from shared import yamlfile

#: The file the tables are read from.
FACTORS = Path(__file__).with_name("factors.yml")


def tables(path: Path = FACTORS) -> dict[str, dict[float, str]]:
    """The tables of ``path``; ValueError naming the file when an entry is no [number, number, words]."""
    with open(path, encoding="utf-8") as fh:
        data = yamlfile.safe_load(fh)
    try:
        return {name: {a / b: str(words) for a, b, words in rows} for name, rows in data.items()}
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"{path}: an entry is not [numerator, denominator, words]: {exc}") from None


_T = tables()
BYTE_FACTORS, GBS_UNITS, FLOP_FACTORS, TFLOPS_UNITS = (_T[k] for k in ("byte_factors", "gbs_units", "flop_factors",
                                                                        "tflops_units"))
