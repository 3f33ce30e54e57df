"""The built site as files: every link of every page resolves inside the site (or is an
absolute URL), and every count a page shows is the count REPRODUCTION.md shows."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from kernelbench.outputs.site import build_site

ROOT = Path(__file__).resolve().parents[1]  # the source tree


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(out)
    return out


class _Page(HTMLParser):
    """A page's element ids, links (href, src) and count boxes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.counts: list[str] = []
        self._in_counts = self._li = False
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) is not None and tag != "html":
                self.links.append(a[key])
        if tag == "ul" and "counts" in (a.get("class") or ""):
            self._in_counts = True
        if tag == "li" and self._in_counts:
            self._li, self._text = True, []

    def handle_endtag(self, tag):
        if tag == "li" and self._li:
            self.counts.append(" ".join("".join(self._text).split()))
            self._li = False
        if tag == "ul":
            self._in_counts = False

    def handle_data(self, data):
        if self._li:
            self._text.append(data)


def parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text())
    return p


def dead_links(site: Path) -> list[str]:
    """Every href and src of every page that does not resolve: a file of the site (and,
    with a fragment, an element of that page with that id), or an absolute URL."""
    pages = {p.name: parse(p) for p in site.glob("*.html")}
    dead = []
    for name, page in pages.items():
        for link in page.links:
            if re.match(r"^(https?:|mailto:|data:)", link):
                continue
            path, _, frag = link.partition("#")
            target = site / unquote(path) if path else site / name
            if not target.is_file() or not target.resolve().is_relative_to(site.resolve()):
                dead.append(f"{name}: {link}")
            elif frag and (target.suffix != ".html" or frag not in pages[target.name].ids):
                dead.append(f"{name}: {link} (no element {frag!r})")
    return dead


def test_every_link_of_every_page_resolves(site, tmp_path):
    pages = sorted(p.name for p in site.glob("*.html"))
    assert {"index.html", "fig1.html", "reproduction.html", "doc-docs-verification.html"} <= set(
        pages
    )
    links = sum(len(parse(site / p).links) for p in pages)
    assert links > 200
    assert dead_links(site) == []
    # the checker fails on a dead link, a missing anchor and a file outside the site
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "a.html").write_text(
        '<p id="x"><a href="b.html">b</a> <a href="a.html#y">y</a> <a href="#x">x</a> '
        '<a href="../c.html">c</a> <a href="https://example.org/">u</a></p>'
    )
    (tmp_path / "c.html").write_text("")
    assert dead_links(broken) == [
        "a.html: b.html",
        "a.html: a.html#y (no element 'y')",
        "a.html: ../c.html",
    ]


def _report_counts() -> dict[str, list[str]]:
    """REPRODUCTION.md's summary table: section key -> its row's counts."""
    rows = {}
    for line in (ROOT / "REPRODUCTION.md").read_text().splitlines():
        m = re.match(r"^\| \[[^\]]*\]\(#(\w+)\) \|(.*)\|$", line)
        if m:
            rows[m[1]] = [c.strip() for c in m[2].split("|")]
    return rows


def test_each_count_on_the_site_is_the_count_of_reproduction_md(site):
    """The counts above each page (compared, reproduced, known, deviate, not run; the
    claims that hold) and the index's summary are REPRODUCTION.md's, number for number;
    Fig. 1's extra verdict rows (a second construction, not counted) are the ones
    REPRODUCTION.md's text names."""
    report = _report_counts()
    assert set(report) == {"fig1", "fig2", "fig3", "liu2020", "yu2016", "yang2014"}
    words = ["paper cells compared", "reproduced", "known deviations", "deviate", "not run"]
    for key, (compared, rep, known, dev, not_run, claims) in report.items():
        counts = parse(site / f"{key}.html").counts
        if compared != "–":
            want = [
                f"{v} {w}" for v, w in zip([compared, rep, known, dev, not_run], words, strict=True)
            ]
            assert counts[:5] == want, key
        if claims != "–":
            hold, total = claims.split(" of ")
            assert any(c.startswith(f"{hold} of {total} claims hold") for c in counts), key
        index = (site / "index.html").read_text()
        row = re.search(rf"<td><a href=\"{key}.html\">.*?</tr>", index, re.S)[0]
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        assert cells[1:] == [compared, rep, known, dev, not_run, claims], key
    text = (ROOT / "REPRODUCTION.md").read_text()
    m = re.search(r"(\d+) of those rows are the known paper cells counted above, (\d+) are", text)
    assert m and m[1] == report["fig1"][2]
    page = (site / "fig1.html").read_text()
    assert f"and {m[2]} rows of a second construction" in page
    yang = parse(site / "yang2014.html").counts
    assert any("re-checks, not counted" in c for c in yang)
