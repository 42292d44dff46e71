"""The fixtures of the page tests here: ``browser``, a real headless Chromium (tests/reports/browser.py)."""
from tests.reports.browser import browser  # noqa: F401 - the headless Chromium fixture, for every page test
