"""A real headless Chromium for the tests that check HTML pages: the driver, the ``browser``
fixture (tests/reports/conftest.py gives it to every test here), the skip mark where Chromium is not installed, and
``visit`` (a page's facts, a screenshot and its console errors)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1100,1400")
#: Skips a test module, with the reason, where Chromium or its driver is missing.
NEEDS_CHROMIUM = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                    reason="Chromium or chromedriver is not installed "
                                           "(apt-get install chromium chromium-driver)")


def chrome(profile_dir: Path):
    """A headless Chromium driver with its own profile folder, keeping the console log."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chrome(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


def visit(browser, page: Path, shot: Path) -> dict:
    """Open ``page``: its SVG count, drawn marks, title, text, loaded resources and height; a
    screenshot at ``shot``; ``errors``, the console's severe messages."""
    browser.get(page.as_uri())
    facts = browser.execute_script("""
        const sized = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
        return {
          svgs: Array.from(document.querySelectorAll('svg')).filter(sized).length,
          marks: Array.from(document.querySelectorAll('svg polyline, svg rect, svg circle')).length,
          title: document.title,
          text: document.body.innerText,
          loaded: performance.getEntriesByType('resource').map(e => e.name),
          height: document.body.scrollHeight,
        };""")
    browser.set_window_size(1100, min(int(facts["height"]) + 80, 6000))
    assert browser.save_screenshot(str(shot))
    facts["errors"] = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    return facts
