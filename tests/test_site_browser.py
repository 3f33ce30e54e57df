"""The results site in a real browser: the system Chromium (Debian's ``chromium`` and
``chromium-driver``, installed by .ci/run) driven headless with selenium.

Every page loads with no console error, its figures are drawn (Plotly's SVG with data
points), unticking a method changes what is drawn, and the tables sort and filter.
Skipped only where no Chromium is installed, and never under CI (CI=true): there a
missing browser fails the test.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from kernelbench.outputs.papers import PAGES
from kernelbench.outputs.site import BASELINE_DIR as BASELINE
from kernelbench.outputs.site import build_site
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
        if page.stem in PAGES:
            assert plots, f"{page.name} has no figure"
        for plot_id in plots:
            assert browser.execute_script(
                "return document.getElementById(arguments[0]).querySelector('svg.main-svg')"
                " !== null",
                plot_id,
            ), f"{page.name}: {plot_id} drew no SVG"
            assert points(browser, plot_id) > 0, f"{page.name}: {plot_id} has no data point"
        # the toolbars' buttons are out of the Tab order
        assert (
            browser.execute_script(
                "return document.querySelectorAll('.modebar-btn:not([tabindex=\"-1\"])').length"
            )
            == 0
        ), page.name


#: What the browser test reads of each drawn trace: its meta, x, y and customdata.
TRACES = (
    "return document.getElementById(arguments[0])._fullData.map(t => ({meta: t.meta, "
    "x: t.x, y: t.y, custom: t.customdata, visible: t.visible, mode: t.mode}))"
)


def mismatches(driver, page: Path, tables: Path = BASELINE) -> list[str]:
    """Each point drawn on ``page`` against the committed table it came from (the spec
    names the table; a trace's meta names each point's row): its series (method label),
    x and value; a mean drawn on a panel's edge against its value in the hover text.
    Also: every point with a value is drawn (the SVG holds as many points)."""
    load(driver, page)
    out = []
    for plot_id in driver.execute_script(
        "return Array.from(document.querySelectorAll('.kb-plot')).map(e => e.id)"
    ):
        m = re.fullmatch(r"(\w+)-(\d+)-\d+", plot_id)
        if m is None:
            continue  # the box plot of ratios
        spec = PAGES[m[1]][int(m[2])]
        table = pd.read_csv(tables / spec.table)
        traces = driver.execute_script(TRACES, plot_id)
        drawn = 0
        below = {r for t in traces if t["meta"]["kind"] == "below" for r in t["meta"]["rows"]}
        for t in traces:
            meta = t["meta"]
            if meta["kind"] in ("paper", "hline"):
                continue
            drawn += sum(v is not None for v in t["y"])
            for j, row in enumerate(meta["rows"]):
                r = table.iloc[row]
                where = f"{plot_id} {meta['method']} {spec.x}={t['x'][j]}"
                if r["method_label"] != meta["method"]:
                    out.append(f"{where}: series {r['method_label']}")
                if float(r[spec.x]) != t["x"][j]:
                    out.append(f"{where}: x {r[spec.x]}")
                if any(c in r and r[c] != v for c, v in spec.where):  # as spec.select
                    out.append(f"{where}: {dict(spec.where)} but row has {r.to_dict()}")
                value = float(r[spec.y])
                if meta["kind"] == "ours" and t["y"][j] is None and row not in below:
                    out.append(f"{where}: not drawn, {value} in {spec.table}")
                elif meta["kind"] == "ours" and t["y"][j] not in (None, value):
                    out.append(f"{where}: value {t['y'][j]} drawn, {value} in {spec.table}")
                if meta["kind"] == "below" and t["custom"][j] != f"{value:.4g}":
                    out.append(f"{where}: {t['custom'][j]} said, {value} in {spec.table}")
        if points(driver, plot_id) != drawn:
            out.append(f"{plot_id}: {points(driver, plot_id)} points drawn, {drawn} values")
    return out


def test_every_drawn_point_is_its_tables_value_series_and_x(site, browser, tmp_path):
    """The points of every paper page, read from the rendered figures, against the
    committed tables; a table with one value changed makes the comparison fail."""
    for key in PAGES:
        assert mismatches(browser, site / f"{key}.html") == [], key
    changed = tmp_path / "tables"
    changed.mkdir()
    fig1 = pd.read_csv(BASELINE / "fig1_baseline.csv")
    row = fig1.index[(fig1.method_label == "sr33") & (fig1.dataset == "letter")][0]
    fig1.loc[row, "mean"] *= 1.01
    fig1.to_csv(changed / "fig1_baseline.csv", index=False)
    out = tmp_path / "site"
    build_site(out, [changed], only=["fig1"])
    bad = mismatches(browser, out / "fig1.html")
    assert len(bad) == 1 and "sr33 n=" in bad[0] and "fig1_baseline.csv" in bad[0]


def test_unticking_a_method_changes_what_is_drawn(site, browser):
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


def _column(driver, table: str, col: int) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.getElementById(arguments[0]).tBodies[0].rows)"
        ".filter(r => !r.hidden).map(r => r.cells[arguments[1]].dataset.v"
        " ?? r.cells[arguments[1]].textContent)",
        table,
        col,
    )


def test_tables_open_sort_by_mouse_and_keyboard_filter_and_select(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    load(browser, site / "fig1.html")
    browser.find_element(By.CSS_SELECTOR, 'details[data-table="verdict-table"] > summary').click()
    headers = browser.find_elements(By.CSS_SELECTOR, "#verdict-table thead th")
    names = [h.text for h in headers]
    assert "our mean" in names and "method_label" not in names  # headers in words
    col = names.index("our mean")
    headers[col].click()
    values = [float(v) for v in _column(browser, "verdict-table", col) if v]
    assert len(values) > 10 and values == sorted(values)
    headers[col].send_keys(Keys.ENTER)  # the keyboard sorts too
    values = [float(v) for v in _column(browser, "verdict-table", col) if v]
    assert values == sorted(values, reverse=True)
    assert headers[col].get_attribute("aria-sort") == "descending"
    assert all(h.get_attribute("tabindex") == "0" for h in headers)
    verdict = names.index("verdict")
    headers[verdict].send_keys(" ")
    words = _column(browser, "verdict-table", verdict)
    assert words == sorted(words) and len(set(words)) > 1

    browser.find_element(By.CSS_SELECTOR, 'details[data-table="explorer-0"] > summary').click()
    total = len(_column(browser, "explorer-0", 0))
    box = browser.find_element(By.CSS_SELECTOR, 'input.kb-filter[data-table="explorer-0"]')
    box.send_keys("sr33")
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.CSS_SELECTOR, 'select.kb-select[data-table="explorer-0"]'
                                '[data-col="0"]')).select_by_visible_text("letter")  # fmt: skip
    rows = browser.execute_script(
        "return Array.from(document.getElementById('explorer-0').tBodies[0].rows)"
        ".filter(r => !r.hidden).map(r => r.textContent.toLowerCase())"
    )
    assert 0 < len(rows) < total
    assert all("sr33" in r and "letter" in r for r in rows)


def test_pages_are_light_and_short(site, browser):
    """Every page opens on its figures; long tables are folded, so the pages stay short
    and light (the Fig. 1 page was 1.1 MB, Yang's 19,200 px long)."""
    assert (site / "fig1.html").stat().st_size < 750_000
    for key in PAGES:
        load(browser, site / f"{key}.html")
        first = browser.execute_script("return document.querySelector('main section').id")
        height = browser.execute_script("return document.body.scrollHeight")
        assert first == "figures", key
        assert height < 9000, (key, height)
