"""HtmlPage: the markup it writes (escaping, numbers, determinism, nothing external) and, in headless
Chromium, what a reader gets: tables, figures, sorting by click and keyboard, no errors, no requests."""

from __future__ import annotations

import base64
import hashlib
import random
import re
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gainscope._version import __version__
from gainscope.errors import RenderError
from gainscope.render.html import SCRIPT, STYLE, HtmlPage, content_security_policy, sanitize_id

from .browser import Browser

SVG = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"
  "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<!-- Created with a plotting library (https://example.org/) -->
<svg xmlns:xlink="http://www.w3.org/1999/xlink" width="320pt" height="160pt" viewBox="0 0 320 160"
     xmlns="http://www.w3.org/2000/svg" version="1.1">
 <metadata><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><dc:date>2024-01-01</dc:date>
 </rdf:RDF></metadata>
 <defs><clipPath id="clip"><rect x="0" y="0" width="320" height="160"/></clipPath></defs>
 <rect x="10" y="10" width="300" height="140" fill="#4c72b0" clip-path="url(#clip)"/>
 <rect x="20" y="100" width="60" height="20" style="fill: #e69f00; stroke: none"/>
 <use xlink:href="#clip"/>
 <text x="20" y="40" fill="#fff">nDCG@10 &amp; AP</text>
</svg>
"""


def _png(width: int, height: int) -> bytes:
    """A small RGB gradient PNG written by hand (no imaging library needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(
        b"\0" + bytes(v for x in range(width) for v in (x * 255 // width, y * 255 // height, 128))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _without_namespaces(markup: str) -> str:
    """The markup minus xmlns declarations (namespace names, never fetched)."""
    return re.sub(r'\sxmlns(?::\w+)?="[^"]*"', "", markup)


# -- markup ---------------------------------------------------------------------------------------


def test_text_everywhere_is_escaped() -> None:
    evil = "<script>alert('x')</script> & \"q\""
    page = HtmlPage(evil).heading(evil).paragraph(evil).preformatted(evil)
    page.table([evil, "v"], [[evil, 1.0]], caption=evil)
    page.figure(svg=SVG, caption=evil, alt=evil)
    with page.details(evil):
        page.paragraph("inside")
    out = page.render()
    assert "<script>alert" not in out
    escaped = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;q&quot;"
    assert out.count(escaped) == 11  # title (2), heading, p, pre, th, td, caption, figcaption, aria-label, summary


def test_numbers_show_four_decimals_and_keep_their_raw_value() -> None:
    out = HtmlPage("t").table(
        ["query", "value", "count"],
        [["q1", 0.123456789, 3], ["q2", None, 12], ["q3", float("nan"), 0], ["q4", float("inf"), -1]],
    ).render()
    assert '<td class="num" data-value="0.123456789">0.1235</td>' in out
    assert '<td class="num" data-value="12">12</td>' in out
    assert out.count('<td class="num missing">\u2013</td>') == 2  # None and NaN, no data-value: sorted last
    assert '<td class="num" data-value="Infinity">inf</td>' in out
    assert '<th scope="col" class="num" data-type="number" aria-sort="none">' in out
    assert '<th scope="col" data-type="text" aria-sort="none">' in out


def test_numeric_columns_can_be_declared_and_tables_need_not_sort() -> None:
    out = HtmlPage("t").table(["id", "n"], [["007", 7]], numeric=[True, False], sortable=False).render()
    assert '<th scope="col" class="num">id</th><th scope="col">n</th>' in out
    assert '<td class="num">007</td><td data-value="7">7</td>' in out
    assert "<button" not in out and 'class="sortable"' not in out


def test_ids_are_sanitised_unique_and_numbered_by_default() -> None:
    page = HtmlPage("t")
    for table_id in ("per query <AP>", "per query <AP>", "1st", None):
        page.table(["a"], [["x"]], table_id=table_id)
    ids = re.findall(r'<table id="([^"]*)"', page.render())
    assert ids == ["per-query-AP", "per-query-AP-2", "t-1st", "table-4"]
    assert sanitize_id("") == "t" and sanitize_id("a b\"c'd", "c") == "a-b-c-d"


def test_row_and_cell_classes_mark_better_worse_significant() -> None:
    out = HtmlPage("t").table(
        ["metric", "a", "b"], [["AP", 0.1, 0.2], ["RR", 0.3, 0.2]],
        row_classes=["better", None], cell_classes=[[None, None, "significant"], [None, None, "worse x\"y"]],
    ).render()
    assert '<tr class="better"><td>AP</td>' in out and "<tr><td>RR</td>" in out
    assert '<td class="num significant" data-value="0.2">0.2000</td>' in out
    assert '<td class="num worse x-y" data-value="0.2">0.2000</td>' in out
    for name in ("better", "worse", "significant"):
        assert f".{name}" in out  # styled


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rows": [["a", 1.0, 2]]}, "row 0 has 3 cells; the header has 2"),
        ({"numeric": [True]}, "numeric has 1 entries; the table has 2 columns"),
        ({"row_classes": ["x", "y"]}, "row_classes has 2 entries; the table has 1 rows"),
        ({"cell_classes": [["x"]]}, "cell_classes has 1 entries for a row of 2 cells"),
    ],
)
def test_table_shapes_are_checked(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"header": ["a", "b"], "rows": [["a", 1.0]], **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)):
        HtmlPage("t").table(**args)


def test_output_is_deterministic_with_version_and_csp() -> None:
    def build() -> str:
        page = HtmlPage("run comparison").heading("Summary").table(["m", "v"], [["AP", 0.25]])
        return page.figure(svg=SVG).figure(png=_png(8, 4)).render()

    first = build()
    assert first == build()
    style = STYLE + ".gs-s1 { fill: #e69f00; stroke: none }\n"
    policy = content_security_policy(style, SCRIPT)
    assert f'<meta http-equiv="Content-Security-Policy" content="{policy}">' in first
    assert f"<style>{style}</style>" in first and f"<script>{SCRIPT}</script>" in first
    assert f"<footer>Made with gainscope {__version__}.</footer>" in first
    assert not re.search(r"\b20\d\d-\d\d-\d\d", first)  # no date, no timestamp


def test_policy_allows_only_the_page_style_and_script_by_hash() -> None:
    # the hash sources are SHA-256 of the exact text of each block, base64 (CSP Level 3, section 8.4)
    def digest(text: bytes) -> str:
        return base64.b64encode(hashlib.sha256(text).digest()).decode()

    assert digest(b"alert(1)") == "bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI="
    assert content_security_policy("a{}", "alert(1)") == (
        f"default-src 'none'; img-src data:; style-src 'sha256-{digest(b'a{}')}'; "
        "script-src 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='; base-uri 'none'; form-action 'none'")
    out = HtmlPage("t").table(["a"], [["x"]]).figure(svg=SVG).render()
    assert "unsafe-inline" not in out and "unsafe-eval" not in out and "nonce" not in out
    # exactly one style block and one script, and the policy names their hashes
    assert out.count("<style>") == 1 and out.count("<script>") == 1 and " style=" not in out


def test_svg_styles_become_classes_of_the_page_style_block() -> None:
    svg = ('<svg><defs><style type="text/css"><![CDATA[*{stroke-linejoin: round}]]></style></defs>'
           '<path d="M 0 0" style="fill: none; stroke: #000"/><path class="a" style=\'font-family: &quot;X&quot;\'/>'
           '<rect style="fill: none; stroke: #000" x="1"></rect><rect style=""/></svg>')
    page = HtmlPage("t").figure(svg=svg)
    page.figure(svg='<svg><style>*{stroke-linejoin: round}</style><circle style="fill: red"/></svg>')
    out = page.render()
    assert ('<svg><defs></defs><path d="M 0 0" class="gs-s1"/><path class="a gs-s2"/>'
            '<rect x="1" class="gs-s1"></rect><rect/></svg>') in out
    assert '<svg><circle class="gs-s3"/></svg>' in out
    # the SVG rules once, then one rule per distinct declaration list, in order of appearance
    assert out.count("*{stroke-linejoin: round}") == 1
    assert ('*{stroke-linejoin: round}\n.gs-s1 { fill: none; stroke: #000 }\n.gs-s2 { font-family: "X" }\n'
            ".gs-s3 { fill: red }\n</style>") in out
    with pytest.raises(ValueError, match="svg style attribute holds '<'"):
        HtmlPage("t").figure(svg='<svg><rect style="fill: &lt;/style&gt;"/></svg>')
    with pytest.raises(ValueError, match="svg <style> element holds '<'"):
        HtmlPage("t").figure(svg='<svg><style><![CDATA[a{content:"</style><script>x</script>"}]]></style></svg>')


def test_nothing_external_is_referenced() -> None:
    page = HtmlPage("t").table(["a"], [["http://not-a-link.example"]]).figure(svg=SVG).figure(png=_png(4, 4))
    out = page.render()
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:[a-z]+:)?//""", out, re.IGNORECASE)
    assert not re.search(r"\burl\(\s*['\"]?\s*(?:[a-z]+:)?//", out, re.IGNORECASE)
    assert "<link rel=\"icon\" href=\"data:,\">" in out  # no favicon request either
    # the only URLs left are the table's text (escaped data) and SVG namespace names
    assert re.findall(r"https?://[^\s\"<]*", _without_namespaces(out)) == ["http://not-a-link.example"]


def test_svg_is_inlined_without_declaration_doctype_metadata_or_comments() -> None:
    out = HtmlPage("t").figure(svg=SVG, caption="per-query nDCG@10", alt="bars").render()
    assert "<?xml" not in out and "<!DOCTYPE svg" not in out and "<metadata" not in out and "<!--" not in out
    assert '<figure><div class="svg" role="img" aria-label="bars"><svg xmlns:xlink=' in out
    assert "nDCG@10 &amp; AP</text>\n</svg></div><figcaption>per-query nDCG@10</figcaption></figure>" in out
    assert '<rect x="20" y="100" width="60" height="20" class="gs-s1"/>' in out


@pytest.mark.parametrize(
    ("svg", "message"),
    [
        ('<svg><image href="https://example.org/a.png"/></svg>', "svg refers to 'https://example.org/a.png'"),
        ("<svg><rect style=\"fill: url('//cdn.example/p')\"/></svg>", "svg refers to '//cdn.example/p'"),
        ("<svg><use xlink:href='sprites.svg#a'/></svg>", "svg refers to 'sprites.svg#a'"),
        ("<div>not svg</div>", "svg must be SVG markup"),
    ],
)
def test_svg_that_cannot_show_offline_is_refused(svg: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        HtmlPage("t").figure(svg=svg)


def test_png_becomes_a_data_uri() -> None:
    png = _png(6, 3)
    out = HtmlPage("t").figure(png=png, alt="a gradient").render()
    found = re.search(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="a gradient">', out)
    assert found and base64.b64decode(found.group(1)) == png
    with pytest.raises(ValueError, match="must be the bytes of a PNG file"):
        HtmlPage("t").figure(png=b"GIF89a")
    with pytest.raises(ValueError, match="exactly one of svg= or png="):
        HtmlPage("t").figure(svg=SVG, png=png)
    with pytest.raises(ValueError, match="exactly one of svg= or png="):
        HtmlPage("t").figure()


def test_details_collects_the_blocks_added_inside_it() -> None:
    page = HtmlPage("t").paragraph("before")
    with page.details("Per query (2 queries)"):
        page.table(["q"], [["q1"], ["q2"]])
    page.paragraph("after")
    out = page.render()
    assert re.search(r"<p>before</p>\n<details><summary>Per query \(2 queries\)</summary>\n<div class=\"table-wrap\">"
                     r".*</table></div>\n</details>\n<p>after</p>", out, re.DOTALL)
    with page.details("open", open=True):
        with pytest.raises(RenderError, match="unfinished details"):
            page.render()
    assert "<details open><summary>open</summary>" in page.render()


def test_heading_levels_are_checked() -> None:
    assert "<h3>x</h3>" in HtmlPage("t").heading("x", 3).render()
    with pytest.raises(ValueError, match="heading level must be 1 to 6, got 7"):
        HtmlPage("t").heading("x", 7)


def test_module_stays_light() -> None:
    code = "import sys, gainscope.render.html; print(sorted(m for m in ('matplotlib', 'PIL') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- in the browser -------------------------------------------------------------------------------

ROWS = 2000


def _per_query_rows() -> list[list[str | float | int | None]]:
    """2,000 queries in shuffled order, a float column with gaps, a small int column with many ties."""
    rng = random.Random(7)
    numbers = list(range(1, ROWS + 1))
    rng.shuffle(numbers)
    return [[f"q{n}", None if n % 97 == 0 else round(rng.random(), 6), rng.randrange(10)] for n in numbers]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    page = HtmlPage("bm25 vs hybrid").paragraph("Two runs on 2,000 queries.")
    page.table(["metric", "bm25", "hybrid"], [["nDCG@10", 0.41, 0.45], ["AP", 0.30, 0.28]],
               table_id="summary", caption="means", row_classes=["better", "worse"])
    page.figure(svg=SVG, caption="an SVG figure", alt="blue box")
    page.figure(png=_png(120, 60), caption="a PNG figure", alt="gradient")
    with page.details("Per query", open=True):
        page.table(["query", "nDCG@10", "judged"], _per_query_rows(), table_id="per-query")
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(page.render(), encoding="utf-8")
    return path


@pytest.fixture
def opened(browser: Browser, report: Path) -> Iterator[Browser]:
    """The report freshly loaded (each test starts unsorted, with empty error lists)."""
    browser.open(report)
    yield browser


def _column(browser: Browser, index: int, attribute: str | None = None) -> list[Any]:
    read = f'c.getAttribute("{attribute}")' if attribute else "c.textContent"
    return browser.evaluate(
        f'Array.from(document.querySelectorAll("#per-query tbody tr"), r => {{ const c = r.cells[{index}]; '
        f"return {read}; }})"
    )


def _sort_state(browser: Browser) -> list[str]:
    return browser.evaluate('Array.from(document.querySelectorAll("#per-query th"), th => th.ariaSort)')


def test_page_loads_offline_without_errors_or_requests(opened: Browser, report: Path) -> None:
    assert opened.evaluate("document.querySelectorAll('table').length") == 2
    assert opened.evaluate("document.querySelectorAll('#per-query tbody tr').length") == ROWS
    assert opened.evaluate("document.querySelectorAll('#summary tbody tr.better').length") == 1
    assert 'id="per-query"' in opened.dom()
    opened.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # a painted frame
    assert opened.console_errors == []
    assert opened.failed_requests == []
    assert [u for u in opened.requests if not u.startswith("data:")] == [report.resolve().as_uri()]


def test_figures_are_drawn(opened: Browser) -> None:
    img = opened.evaluate(
        "(() => { const i = document.querySelector('figure img'); const b = i.getBoundingClientRect(); "
        "return [i.complete, i.naturalWidth, i.naturalHeight, b.width, b.height]; })()"
    )
    assert img == [True, 120, 60, 120, 60]
    svg = opened.evaluate("(() => { const b = document.querySelector('figure svg').getBoundingClientRect(); "
                          "return [b.width, b.height]; })()")
    assert svg[0] > 100 and svg[1] > 50


def test_layout_styles_apply(opened: Browser) -> None:
    style = opened.evaluate(
        "(() => { const th = document.querySelector('#per-query thead th'); "
        "const td = document.querySelector('#per-query td.num'); "
        "return [getComputedStyle(th).position, getComputedStyle(td).textAlign]; })()"
    )
    assert style == ["sticky", "right"]


def test_numeric_header_sorts_by_value_ascending_then_descending(opened: Browser) -> None:
    rows = _per_query_rows()
    values = [r[1] for r in rows if r[1] is not None]
    gaps = sum(r[1] is None for r in rows)
    opened.click("#per-query thead th:nth-child(2) button")
    assert _sort_state(opened) == ["none", "ascending", "none"]
    shown = _column(opened, 1, "data-value")
    assert [float(v) for v in shown[:-gaps]] == sorted(values) and shown[-gaps:] == [None] * gaps
    assert _column(opened, 1)[0] == f"{min(values):.4f}"
    opened.click("#per-query thead th:nth-child(2) button")
    assert _sort_state(opened) == ["none", "descending", "none"]
    shown = _column(opened, 1, "data-value")
    assert [float(v) for v in shown[:-gaps]] == sorted(values, reverse=True) and shown[-gaps:] == [None] * gaps
    assert opened.console_errors == []


def test_text_header_sorts_naturally_and_sorting_is_stable(opened: Browser) -> None:
    rows = _per_query_rows()
    by_query = sorted(rows, key=lambda r: int(str(r[0])[1:]))
    opened.click("#per-query thead th:nth-child(1) button")
    assert _column(opened, 0) == [r[0] for r in by_query]  # q2 before q10
    opened.click("#per-query thead th:nth-child(3) button")  # many ties: queries keep their order
    expected = sorted(by_query, key=lambda r: int(r[2] or 0))
    assert _column(opened, 0) == [r[0] for r in expected]
    assert _sort_state(opened) == ["none", "none", "ascending"]


def test_headers_sort_from_the_keyboard(opened: Browser) -> None:
    button = "#per-query thead th:nth-child(1) button"
    opened.press_enter(button)
    opened.press_enter(button)
    assert _sort_state(opened) == ["descending", "none", "none"]
    assert _column(opened, 0)[:2] == [f"q{ROWS}", f"q{ROWS - 1}"]


def test_the_browser_blocks_anything_external(opened: Browser) -> None:
    loaded = opened.evaluate(
        "new Promise(done => { const i = new Image(); i.onload = () => done('loaded'); "
        "i.onerror = () => done('blocked'); i.src = 'http://127.0.0.1:9/x.png'; document.body.append(i); })"
    )
    assert loaded == "blocked"
    assert opened.failed_requests == ["http://127.0.0.1:9/x.png: csp"]
    assert any("violates the following Content Security Policy" in e for e in opened.console_errors)


def test_svg_styling_applies_through_the_page_style_block(opened: Browser) -> None:
    fill = opened.evaluate("getComputedStyle(document.querySelector('figure svg rect.gs-s1')).fill")
    assert fill == "rgb(230, 159, 0)"
    assert opened.console_errors == []  # nothing the policy refused


@pytest.fixture(scope="module")
def injected(report: Path) -> Path:
    """The report with markup an escaping bug could have let in: an inline script, an event handler, a
    javascript: URL, a style block and a style attribute."""
    html = report.read_text(encoding="utf-8")
    evil = ("<script>window.injected = 'script';</script>"
            "<img src=\"data:,\" onerror=\"window.injected = 'onerror'\" id=\"evil-img\">"
            "<a id=\"evil-link\" href=\"javascript:void(window.injected = 'link')\">x</a>"
            "<style>body { background: rgb(255, 0, 0); }</style>"
            "<p id=\"evil-style\" style=\"color: rgb(0, 255, 0)\">styled</p>")
    path = report.with_name("injected.html")
    path.write_text(html.replace("<main>\n", "<main>\n" + evil, 1), encoding="utf-8")
    return path


def test_injected_inline_script_and_styles_do_not_run(browser: Browser, injected: Path) -> None:
    browser.open(injected)
    browser.click("#evil-link")
    assert browser.evaluate("typeof window.injected") == "undefined"
    assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    assert browser.evaluate("getComputedStyle(document.getElementById('evil-style')).color") == "rgb(31, 35, 40)"
    refused = [e for e in browser.console_errors if "Content Security Policy" in e]
    assert len(refused) >= 4, browser.console_errors
    # the page's own script still runs: sorting works
    browser.click("#per-query thead th:nth-child(1) button")
    assert _sort_state(browser) == ["ascending", "none", "none"]


def test_screenshot_is_a_viewport_png_with_content(opened: Browser, tmp_path: Path) -> None:
    data = opened.screenshot(tmp_path / "report.png")
    assert (tmp_path / "report.png").read_bytes() == data
    assert _png_size(data) == (opened.width, opened.height)
    # decoded by the browser (no imaging library here): a rendered page has many colours, a blank one has one
    colours = opened.evaluate(
        f'(async () => {{ const bytes = Uint8Array.from(atob("{base64.b64encode(data).decode()}"), '
        "c => c.charCodeAt(0)); const bitmap = await createImageBitmap(new Blob([bytes], {type: 'image/png'})); "
        "const canvas = new OffscreenCanvas(bitmap.width, bitmap.height); const ctx = canvas.getContext('2d'); "
        "ctx.drawImage(bitmap, 0, 0); const px = new Uint32Array(ctx.getImageData(0, 0, bitmap.width, "
        "bitmap.height).data.buffer); return [bitmap.width, bitmap.height, new Set(px).size]; })()"
    )
    assert colours[:2] == [opened.width, opened.height]
    assert colours[2] > 10
