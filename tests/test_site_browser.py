"""The results site in a real browser: the system Chromium (Debian's ``chromium`` and
``chromium-driver``, installed by .ci/run) driven headless with selenium.

Every page loads with no console error, its figures are drawn (Plotly's SVG with data
points), unticking a method changes what is drawn, and the tables sort and filter.
Skipped only where no Chromium is installed, and never under CI (CI=true): there a
missing browser fails the test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelbench.site.build import build_site
from tests.conftest import missing_ground

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)


def _which(names: tuple[str, ...]) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


def _missing(what: str) -> None:
    missing_ground(
        f"{what} not installed (apt-get install chromium chromium-driver)",
        ".ci/run installs chromium and chromium-driver",
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(out)
    return out


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium")
    binary, driver_path = _which(BROWSERS), _which(DRIVERS)
    if binary is None or driver_path is None:
        _missing("chromium" if binary is None else "chromedriver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--allow-file-access-from-files"):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    driver.set_page_load_timeout(120)
    yield driver
    driver.quit()


def load(driver, page: Path) -> list[dict]:
    """Open a page, wait until its figures are drawn; the browser's log since the last."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.as_uri())
    WebDriverWait(driver, 120).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && Array.from("
            "document.querySelectorAll('.kb-plot')).every(e => e.classList.contains("
            "'js-plotly-plot'))"
        )
    )
    return driver.get_log("browser")


def points(driver, plot_id: str) -> int:
    """How many data points (markers, box points) a figure draws now."""
    return driver.execute_script(
        "return document.getElementById(arguments[0]).querySelectorAll("
        "'g.points path.point, g.boxlayer path.point').length",
        plot_id,
    )


def test_every_page_loads_without_console_errors_and_draws_its_figures(site, browser):
    pages = sorted(site.glob("*.html"))
    assert {p.stem for p in pages} >= {"index", "fig1", "fig2", "fig3", "liu2020"}
    for page in pages:
        log = load(browser, page)
        errors = [e for e in log if e.get("level") == "SEVERE"]
        assert not errors, f"{page.name}: {errors}"
        plots = browser.execute_script(
            "return Array.from(document.querySelectorAll('.kb-plot')).map(e => e.id)"
        )
        if page.stem == "index":
            continue
        assert plots, f"{page.name} has no figure"
        for plot_id in plots:
            assert browser.execute_script(
                "return document.getElementById(arguments[0]).querySelector('svg.main-svg')"
                " !== null",
                plot_id,
            ), f"{page.name}: {plot_id} drew no SVG"
            assert points(browser, plot_id) > 0, f"{page.name}: {plot_id} has no data point"


def test_unticking_a_method_or_kernel_changes_what_is_drawn(site, browser):
    from selenium.webdriver.common.by import By

    load(browser, site / "fig1.html")
    plot_id = browser.execute_script("return document.querySelector('.kb-plot').id")
    before = points(browser, plot_id)
    box = browser.find_element(By.CSS_SELECTOR, 'input.kb-toggle[data-kind="method"][value="rff"]')
    box.click()
    after = points(browser, plot_id)
    hidden = browser.execute_script(
        "return document.getElementById(arguments[0]).data"
        ".filter(t => t.visible === false).map(t => t.meta.method)",
        plot_id,
    )
    assert 0 < after < before
    assert hidden and set(hidden) == {"rff"}
    box.click()
    assert points(browser, plot_id) == before
    kernel = browser.find_element(By.CSS_SELECTOR, 'input.kb-toggle[data-kind="kernel"]')
    kernel.click()
    assert 0 < points(browser, plot_id) < before


def _column(driver, table: str, col: int) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.getElementById(arguments[0]).tBodies[0].rows)"
        ".filter(r => !r.hidden).map(r => r.cells[arguments[1]].dataset.v)",
        table,
        col,
    )


def test_the_verdict_table_sorts_and_the_explorer_filters(site, browser):
    from selenium.webdriver.common.by import By

    load(browser, site / "fig1.html")
    headers = browser.find_elements(By.CSS_SELECTOR, "#verdict-table thead th")
    names = [h.text for h in headers]
    col = names.index("ours_mean")
    headers[col].click()
    values = [float(v) for v in _column(browser, "verdict-table", col) if v]
    assert len(values) > 10 and values == sorted(values)
    headers[col].click()
    values = [float(v) for v in _column(browser, "verdict-table", col) if v]
    assert values == sorted(values, reverse=True)
    verdict = names.index("verdict")
    headers[verdict].click()
    words = _column(browser, "verdict-table", verdict)
    assert words == sorted(words) and len(set(words)) > 1

    total = len(_column(browser, "explorer-0", 0))
    box = browser.find_element(By.CSS_SELECTOR, 'input.kb-filter[data-table="explorer-0"]')
    box.send_keys("sr33 letter")
    rows = browser.execute_script(
        "return Array.from(document.getElementById('explorer-0').tBodies[0].rows)"
        ".filter(r => !r.hidden).map(r => r.textContent.toLowerCase())"
    )
    assert 0 < len(rows) < total
    assert all("sr33" in r and "letter" in r for r in rows)
