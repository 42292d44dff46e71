"""Late work: an assignment's due date, grace period and late policy (course.yml ``late:``),
per-student extensions (a small CSV), and the penalty they give one submission.

course.yml, under an assignment (every key but ``due`` optional)::

    late:
      due: "2026-12-11T23:59:00-05:00"   # ISO 8601 with a UTC offset (or Z)
      grace_minutes: 15                  # a submission this many minutes after due is on time
      policy: percent_per_day            # none | percent_per_day | zero_after
      percent_per_day: 10                # percent_per_day: % of the raw score per started day late
      max_percent: 50                    # percent_per_day: the cap, in % of the raw score
      cutoff: "2026-12-14T23:59:00-05:00"  # zero_after: full credit until here, zero after
      timezone: America/New_York         # where an LMS writes local times (Moodle's worksheet)

Days late are counted from the due date (the grace period only forgives), each started day of
24 h as one: 25 h late is 2 days. ``zero_after`` gives full credit up to the cutoff and zero after
it. ``none`` records the lateness and takes nothing. ``timezone`` (an IANA name) is the zone of
the local times in Moodle's grading worksheet (``grade-all --moodle-worksheet``), the zone of the
Moodle profile that downloads it.

Extensions CSV (``grade-all --extensions FILE``): a header with ``student`` and ``days`` (extra
days, may be fractional) or ``due`` (a new ISO 8601 due date), or both with one filled per row;
``student`` matches the OUT folder name, a Gradescope sid or email, or a name. An extension moves
the due date and the cutoff alike. grade-all keeps the extensions given in OUT/extensions.csv
(autograder/batch/extensions.py).
"""
from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import math
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.core.errors import UsageError

POLICIES = ("none", "percent_per_day", "zero_after")
DAY_S = 86400.0
_KEYS = {"due", "grace_minutes", "policy", "percent_per_day", "max_percent", "cutoff", "timezone"}
_STAMP = re.compile(r"^\s*(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(\.\d+)?\s*"
                    r"(Z|UTC|GMT|[+-]\d\d(?::?\d\d)?)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class LatePolicy:
    """``due`` and ``cutoff`` are aware datetimes; ``grace_minutes`` in minutes; percentages of
    the raw score."""

    due: dt.datetime
    grace_minutes: float = 0.0
    policy: str = "none"
    percent_per_day: float = 0.0
    max_percent: float = 100.0
    cutoff: dt.datetime | None = None
    timezone: str = ""   # an IANA name: the zone of an LMS's local times; '' when not given


@dataclass(frozen=True)
class Penalty:
    """The verdict for one submission: how late (``late_s`` seconds after the due date, 0 when on
    time or within grace), ``days`` counted, and ``percent`` of the raw score taken."""

    late_s: float
    days: int
    percent: float
    due: dt.datetime
    cutoff: dt.datetime | None


def parse_time(value, where: str) -> dt.datetime:
    """An aware datetime from an ISO 8601 string (or a YAML timestamp); UsageError naming
    ``where`` when it is not one or has no UTC offset. Fractions beyond microseconds are cut."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise UsageError(f"{where}: {value} has no UTC offset (write e.g. 2026-12-11T23:59:00-05:00)")
        return value
    text = str(value)
    m = _STAMP.match(text)
    if not m:
        raise UsageError(f"{where}: {text!r} is not a date and time (ISO 8601, e.g. 2026-12-11T23:59:00Z)")
    date, clock, frac, zone = m.groups()
    clock = clock if clock.count(":") == 2 else clock + ":00"
    frac = (frac or "")[:7]
    zone = zone or ""
    if not zone:
        raise UsageError(f"{where}: {text!r} has no UTC offset (write e.g. 2026-12-11T23:59:00-05:00)")
    if zone.upper() in ("Z", "UTC", "GMT"):
        zone = "+00:00"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:] or '00'}"
    return dt.datetime.fromisoformat(f"{date}T{clock}{frac}{zone}")


def parse(raw, where: str, prefix: str) -> LatePolicy | None:
    """course.yml's ``late:`` mapping of one assignment, validated; None when absent."""
    if raw is None:
        return None
    name = f"{where}: key '{prefix}"
    if not isinstance(raw, dict):
        raise UsageError(f"{name}' must be a mapping (due, grace_minutes, policy, ...)")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise UsageError(f"{name}.{unknown[0]}' is unknown (expected one of: {', '.join(sorted(_KEYS))})")
    if "due" not in raw:
        raise UsageError(f"{name}.due' is missing (the due date, ISO 8601 with a UTC offset)")
    due = parse_time(raw["due"], f"{where}: key '{prefix}.due'")
    policy = raw.get("policy", "none")
    if policy not in POLICIES:
        raise UsageError(f"{name}.policy' must be one of {', '.join(POLICIES)}, got {policy!r}")

    def number(key, default, low, high):
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise UsageError(f"{name}.{key}' must be a number from {low:g} to {high:g}, got {value!r}")
        return float(value)

    grace = number("grace_minutes", 0, 0, 7 * 24 * 60)
    per_day = number("percent_per_day", 0, 0, 100)
    cap = number("max_percent", 100, 0, 100)
    if policy == "percent_per_day" and per_day <= 0:
        raise UsageError(f"{name}.percent_per_day' must be above 0 for policy percent_per_day")
    cutoff = None
    if "cutoff" in raw:
        cutoff = parse_time(raw["cutoff"], f"{where}: key '{prefix}.cutoff'")
        if cutoff < due:
            raise UsageError(f"{name}.cutoff' ({cutoff.isoformat()}) is before the due date")
    if policy == "zero_after" and cutoff is None:
        raise UsageError(f"{name}.cutoff' is missing (policy zero_after gives zero after it)")
    for key, used_by in (("percent_per_day", "percent_per_day"), ("max_percent", "percent_per_day"),
                         ("cutoff", "zero_after")):
        if key in raw and policy != used_by:
            raise UsageError(f"{name}.{key}' applies to policy {used_by} only (policy is {policy})")
    zone = raw.get("timezone", "")
    if zone:
        zone_named(zone, f"{name}.timezone'")
    return LatePolicy(due=due, grace_minutes=grace, policy=policy, percent_per_day=per_day,
                      max_percent=cap, cutoff=cutoff, timezone=str(zone))


def zone_named(name, where: str):
    """The IANA time zone ``name``; UsageError naming ``where`` when there is none of that name."""
    import zoneinfo
    try:
        return zoneinfo.ZoneInfo(str(name).strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise UsageError(f"{where}: unknown time zone {name!r} (give an IANA name such as "
                         f"Europe/London or America/New_York)") from None


@dataclass(frozen=True)
class Extension:
    """A per-student extension: ``days`` more, or a new ``due`` date."""

    days: float = 0.0
    due: dt.datetime | None = None

    def shift(self, policy: LatePolicy) -> dt.timedelta:
        return (self.due - policy.due) if self.due is not None else dt.timedelta(days=self.days)

    def describe(self) -> str:
        return f"due moved to {self.due.isoformat()}" if self.due else f"{self.days:g} days"


def load_extensions(path: Path | str) -> dict[str, Extension]:
    """The extensions CSV as student -> Extension; UsageError names the file, line and problem.
    The header names ``student`` and ``days`` or ``due`` (or both: then each row fills one)."""
    from autograder.core import csvsafe

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the extensions file ({getattr(exc, 'strerror', None) or exc})") from None
    reader = csv.DictReader(text.splitlines())
    fields = [f.strip() for f in reader.fieldnames or []]
    if "student" not in fields or not {"days", "due"} & set(fields):
        raise UsageError(f"{path}: the header must name 'student' and one of 'days' or 'due' "
                         f"(got {', '.join(fields) or 'nothing'})")
    out: dict[str, Extension] = {}
    for line, row in enumerate(reader, start=2):
        row = {(k or "").strip(): csvsafe.restore((v or "").strip()) for k, v in row.items() if k}
        if not any(row.values()):
            continue
        student = row.get("student", "")
        if not student:
            raise UsageError(f"{path} line {line}: no student")
        if student in out:
            raise UsageError(f"{path} line {line}: {student!r} is listed twice")
        days_text, due_text = row.get("days", ""), row.get("due", "")
        if days_text and due_text:
            raise UsageError(f"{path} line {line}: give days or due, not both")
        if "days" in fields and (days_text or "due" not in fields):
            try:
                days = float(days_text)
            except ValueError:
                days = math.nan
            if not (math.isfinite(days) and days > 0):
                raise UsageError(f"{path} line {line}: days must be a positive number, got {days_text!r}")
            out[student] = Extension(days=days)
        else:
            out[student] = Extension(due=parse_time(due_text, f"{path} line {line}"))
    return out


def penalty(policy: LatePolicy, submitted: dt.datetime, extension: Extension | None = None) -> Penalty:
    """How late ``submitted`` is under ``policy`` (moved by ``extension``) and what it costs."""
    shift = extension.shift(policy) if extension else dt.timedelta(0)
    due = policy.due + shift
    cutoff = policy.cutoff + shift if policy.cutoff else None
    late_s = (submitted - due).total_seconds()
    if late_s <= policy.grace_minutes * 60:
        return Penalty(late_s=0.0, days=0, percent=0.0, due=due, cutoff=cutoff)
    days = math.ceil(late_s / DAY_S)
    if policy.policy == "percent_per_day":
        percent = min(policy.max_percent, days * policy.percent_per_day)
    elif policy.policy == "zero_after":
        percent = 100.0 if submitted > cutoff else 0.0
    else:
        percent = 0.0
    return Penalty(late_s=late_s, days=days, percent=percent, due=due, cutoff=cutoff)


def just_after_due(policy: LatePolicy, extension: Extension | None = None) -> dt.datetime:
    """The first second past the due date (moved by ``extension``) and the grace period: the time
    of a submission the platform calls late without saying when (Canvas's ``LATE``)."""
    shift = extension.shift(policy) if extension else dt.timedelta(0)
    return policy.due + shift + dt.timedelta(minutes=policy.grace_minutes, seconds=1)


def with_due(policy: LatePolicy, due: dt.datetime) -> LatePolicy:
    """``policy`` with the platform's due date ``due`` (Gradescope's own), its cutoff moved alike."""
    shift = due - policy.due
    return dataclasses.replace(policy, due=due, cutoff=policy.cutoff + shift if policy.cutoff else None)


#: Where results.json keeps the late-work verdict (Gradescope ignores unknown keys).
RESULTS_KEY = "late"
_LINE = "Late work: "


def raw_score(results: dict) -> float:
    """The score before any penalty: the sum of the tests' points."""
    return sum(float(t.get("score") or 0.0) for t in results.get("tests", []))


def apply(results: dict, policy: LatePolicy | None, submitted: dt.datetime | None, source: str,
          extension: Extension | None = None) -> dict:
    """``results`` with the late verdict: ``score`` = raw - penalty, ``late`` = {submitted_at,
    time_source, due, extension, late_hours, days_late, policy, penalty_percent, raw_score,
    penalty, score} (points; hours), and a line at the top of ``output``. Idempotent: the raw
    score is read from the tests, so applying again (a new extension) replaces the old verdict.
    ``policy`` None removes any verdict."""
    out = dict(results)
    text = str(out.get("output", ""))
    if text.startswith(_LINE):
        text = text.split("\n", 1)[1] if "\n" in text else ""
    out["output"] = text
    raw = raw_score(out)
    if policy is None:
        out.pop(RESULTS_KEY, None)
        out["score"] = round(raw, 6)
        return out
    if submitted is None:
        verdict = Penalty(late_s=0.0, days=0, percent=0.0, due=policy.due, cutoff=policy.cutoff)
    else:
        verdict = penalty(policy, submitted, extension)
    points = round(raw * verdict.percent / 100.0, 6)
    final = round(raw - points, 6)
    out[RESULTS_KEY] = {
        "submitted_at": submitted.isoformat() if submitted else None, "time_source": source,
        "due": verdict.due.isoformat(), "extension": extension.describe() if extension else "",
        "late_hours": round(verdict.late_s / 3600.0, 3), "days_late": verdict.days,
        "policy": policy.policy, "penalty_percent": verdict.percent, "raw_score": round(raw, 6),
        "penalty": points, "score": final}
    out["score"] = final
    if submitted is None:
        line = f"{_LINE}no submission time ({source}); no penalty."
    elif verdict.days == 0:
        line = f"{_LINE}on time (submitted {submitted.isoformat()}, {source}; due {verdict.due.isoformat()})."
    else:
        line = (f"{_LINE}submitted {submitted.isoformat()} ({source}), {verdict.late_s / 3600:.1f} h "
                f"after the due date {verdict.due.isoformat()} ({verdict.days} day(s)); policy "
                f"{policy.policy}: -{verdict.percent:g}% = -{points:.4g} points; raw {raw:.4g}, "
                f"final {final:.4g}.")
    out["output"] = line + ("\n" + text if text else "")
    return out
