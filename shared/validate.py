"""Argument checks that raise ValueError with one clear line naming the argument and its unit."""
from __future__ import annotations

import math
import numbers


def positive(name: str, value, unit: str = "", *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float; ValueError unless it is a finite number > 0 (or inf if allowed)."""
    _number(name, value)
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not (allow_inf and x > 0)) or x <= 0:
        raise ValueError(f"{name} must be a positive finite number{_unit(unit)}, got {value!r}")
    return x


def non_negative(name: str, value, unit: str = "") -> float:
    """Return ``value`` as a float; ValueError unless it is a finite number >= 0."""
    _number(name, value)
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0{_unit(unit)}, got {value!r}")
    return x


def positive_int(name: str, value, unit: str = "") -> int:
    """Return ``value``; ValueError unless it is an integer > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive integer{_unit(unit)}, got {value!r}")
    return int(value)


def _number(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {value!r}")


def _unit(unit: str) -> str:
    return f" ({unit})" if unit else ""
