"""One self-contained HTML page: headings, paragraphs, sortable tables, inline figures, collapsible sections.

The page opens offline and loads nothing: styles and the sorting script are inline, SVG figures are inlined
as markup and PNG figures as ``data:`` URIs, and a Content-Security-Policy ``<meta>`` (``default-src
'none'``) makes the browser itself refuse anything external. The policy allows exactly one style block and
one script, by their SHA-256 hashes (CSP Level 3 hash sources), and no ``'unsafe-inline'``: markup that an
escaping bug let into the page (a ``<script>``, an ``onerror=`` attribute, a ``<style>`` or ``style=``)
is not run or applied. Output is deterministic: the same calls give byte-identical HTML (no timestamps, no
random nonce; ids come from counters), so reports can be compared and committed.

    page = HtmlPage("bm25 vs hybrid")
    page.heading("Summary")
    page.table(["metric", "bm25", "hybrid"], [["nDCG@10", 0.4132, 0.4518]], row_classes=["better"])
    page.figure(svg=svg_text, caption="nDCG@10 per query", alt="bar chart of per-query differences")
    with page.details("Per query (250 queries)"):
        page.table(["query", "nDCG@10"], per_query_rows)
    html_text = page.render()

Tables: floats are shown with 4 decimals, ``None`` (and NaN) as an en dash, and every number keeps its raw
value in ``data-value`` so that clicking a header sorts numerically (missing values last in either
direction; ties keep their previous order). Header buttons are keyboard accessible. The classes
``better``, ``worse`` and ``significant`` mark rows (``row_classes``) or single cells (``cell_classes``).

Text is always escaped. SVG markup is trusted input (our own plots) and is inlined as given, minus any XML
declaration, DOCTYPE, ``<metadata>`` and comments (which carry dates and URLs); a reference to anything but a
fragment (``#id``) or a ``data:`` URI inside it is an error, since the page could not show it offline. The
SVG's own styling moves into the page's one style block, so that the policy needs no ``'unsafe-inline'``:
each distinct ``style="..."`` attribute becomes a class (``gs-s1``, ``gs-s2``... with the same declarations;
a class rule outranks the SVG's ``*`` rules as the attribute did) and the rules of its ``<style>`` elements
are kept once each.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Self, TypeGuard

from gainscope._version import __version__
from gainscope.errors import RenderError
from gainscope.render.text import fmt_number

__all__ = ["Cell", "HtmlPage", "content_security_policy"]

Cell = str | float | int | None

MISSING = "\u2013"  # en dash
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_XML_DECLARATION = re.compile(r"<\?xml[^>]*\?>", re.IGNORECASE)
_DOCTYPE = re.compile(r"<!DOCTYPE(?:[^>\[]|\[[^\]]*\])*>", re.IGNORECASE)
_SVG_NOISE = re.compile(r"<metadata\b.*?</metadata>|<metadata\b[^>]*/>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_SVG_REFERENCE = re.compile(
    r"""(?:\b(?:href|src)\s*=\s*["']\s*|url\(\s*["']?\s*)(?!#|data:|["')])([^"')\s]*)""", re.IGNORECASE
)
_SVG_STYLE_ELEMENT = re.compile(r"<style\b[^>]*>(.*?)</style\s*>|<style\b[^>]*/>", re.IGNORECASE | re.DOTALL)
_SVG_TAG = re.compile(r"<[A-Za-z][^<>]*>")
_STYLE_ATTRIBUTE = re.compile(r"""\sstyle\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_CLASS_ATTRIBUTE = re.compile(r"""\sclass\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_CDATA = re.compile(r"^\s*<!\[CDATA\[(.*)\]\]>\s*$", re.DOTALL)

STYLE = """
:root { color-scheme: light; --line: #d0d7de; --head: #f3f4f6; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem 1.5rem 0.5rem; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.6em 0 0.6em; }
h1 { margin-top: 0.4em; font-size: 1.7rem; }
p { max-width: 80ch; }
pre { background: var(--head); border: 1px solid var(--line); padding: 0.75rem; overflow-x: auto;
      font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.table-wrap { display: block; width: fit-content; max-width: 100%; max-height: 80vh; overflow: auto;
              border: 1px solid var(--line); margin: 0.5rem 0 1.5rem; }
table { border-collapse: separate; border-spacing: 0; font-size: 14px; }
caption { caption-side: top; text-align: left; padding: 0.4rem 0.5rem; color: var(--muted); }
th, td { padding: 0.3rem 0.9rem; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
thead th { position: sticky; top: 0; z-index: 1; background: var(--head); font-weight: 600;
           border-bottom: 2px solid var(--line); }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums;
                 font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
th.num { font-family: inherit; }
tbody tr:nth-child(even) { background: #fafbfc; }
tbody tr:hover { background: #eef4ff; }
td.missing { color: var(--muted); }
th button.sort { all: inherit; display: inline-flex; gap: 0.3em; align-items: baseline; cursor: pointer;
                 padding: 0; border: 0; background: none; }
th button.sort:focus-visible { outline: 2px solid #0969da; outline-offset: 2px; }
th .arrow::after { content: "\\2195"; opacity: 0.35; }
th[aria-sort="ascending"] .arrow::after { content: "\\25B2"; opacity: 1; }
th[aria-sort="descending"] .arrow::after { content: "\\25BC"; opacity: 1; }
.better, tr.better td { background: #e6f4ea; color: #0b5d1e; }
.worse, tr.worse td { background: #fce8e6; color: #8c1d18; }
.significant, tr.significant td { font-weight: 700; }
figure { margin: 1rem 0 1.5rem; }
figure svg, figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 0.9em; margin-top: 0.4rem; }
details { margin: 0.5rem 0 1rem; }
summary { cursor: pointer; font-weight: 600; padding: 0.3rem 0; }
footer { max-width: 1200px; margin: 0 auto; padding: 1rem 1.5rem 2rem; color: var(--muted); font-size: 0.85em; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  .table-wrap { max-height: none; overflow: visible; border: 0; }
  thead { display: table-header-group; }
  thead th { position: static; }
  tr, figure { break-inside: avoid; }
  th .arrow { display: none; }
  tbody tr:hover { background: none; }
}
"""

SCRIPT = """
(() => {
  "use strict";
  const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

  // null means "no value": such rows go last whichever the direction
  function sortKey(cell, numeric) {
    if (!cell || cell.classList.contains("missing")) return null;
    if (!numeric) return cell.textContent.trim();
    const raw = cell.getAttribute("data-value");
    const value = raw === null ? NaN : Number(raw);
    return Number.isNaN(value) ? null : value;
  }

  function compare(a, b, numeric) {
    if (numeric) return a < b ? -1 : a > b ? 1 : 0;
    return collator.compare(a, b);
  }

  // decorate, sort once (O(n log n)), re-append: ties keep their current order
  function sortBy(header) {
    const table = header.closest("table");
    const body = table.tBodies[0];
    const column = header.cellIndex;
    const numeric = header.dataset.type === "number";
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    const sign = ascending ? 1 : -1;
    const keyed = Array.from(body.rows, (row, index) => ({ row, index, key: sortKey(row.cells[column], numeric) }));
    keyed.sort((a, b) => {
      if (a.key === null || b.key === null) {
        if (a.key === b.key) return a.index - b.index;
        return a.key === null ? 1 : -1;
      }
      return sign * compare(a.key, b.key, numeric) || a.index - b.index;
    });
    const fragment = document.createDocumentFragment();
    for (const item of keyed) fragment.appendChild(item.row);
    body.appendChild(fragment);
    for (const th of table.tHead.rows[0].cells) {
      if (th.hasAttribute("aria-sort")) th.setAttribute("aria-sort", "none");
    }
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  for (const button of document.querySelectorAll("table.sortable thead button.sort")) {
    button.addEventListener("click", () => sortBy(button.closest("th")));
  }
  // collapsed sections would print as their summary only
  window.addEventListener("beforeprint", () => {
    for (const details of document.querySelectorAll("details")) details.open = true;
  });
})();
"""


def _text(value: str) -> str:
    return html.escape(value, quote=True)


def _sha256_source(text: str) -> str:
    """The CSP hash source of an inline block: ``'sha256-<base64 of SHA-256 of its UTF-8 text>'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(style: str, script: str) -> str:
    """The page's policy: nothing external (``default-src 'none'``, images only as ``data:``), and only the
    style block ``style`` and the script ``script`` (their exact text) may apply or run; no ``<base>`` and no
    form submission either."""
    return (f"default-src 'none'; img-src data:; style-src {_sha256_source(style)}; "
            f"script-src {_sha256_source(script)}; base-uri 'none'; form-action 'none'")


def _css_text(value: str, what: str) -> str:
    """CSS taken out of SVG markup, unescaped, for the page's style block; ``<`` would end that block."""
    text = html.unescape(value).strip()
    if "<" in text:
        raise RenderError(f"svg {what} holds '<': {text[:80]!r}")
    return text


def sanitize_id(value: str, prefix: str = "t") -> str:
    """``value`` as an HTML id or class token: runs of characters other than letters, digits, ``_`` and
    ``-`` become ``-``, and a token that does not start with a letter gets ``prefix-`` in front."""
    token = _ID_UNSAFE.sub("-", value).strip("-")
    if not token or not token[0].isalpha():
        token = f"{prefix}-{token}" if token else prefix
    return token


def _is_number(value: Cell) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _data_value(value: float | int) -> str:
    """The raw value as JavaScript's ``Number()`` reads it back exactly ('' for NaN, which sorts last)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _cell(value: Cell, numeric: bool, extra_class: str | None) -> str:
    """One ``<td>``: displayed text, the raw number in ``data-value``, classes for alignment and marking."""
    classes = [sanitize_id(c, "c") for c in (extra_class or "").split()]
    attrs = ""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        display = MISSING
        classes.insert(0, "missing")
    elif _is_number(value):
        display = fmt_number(value) if isinstance(value, float) else str(value)
        attrs = f' data-value="{_data_value(value)}"'
    else:
        display = str(value)
    if numeric:
        classes.insert(0, "num")
    class_attr = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{class_attr}{attrs}>{_text(display)}</td>"


def _numeric_columns(rows: Sequence[Sequence[Cell]], width: int) -> list[bool]:
    """A column is numeric when it holds at least one number and nothing but numbers and ``None``."""
    numeric = []
    for col in range(width):
        values = [row[col] for row in rows if row[col] is not None]
        numeric.append(bool(values) and all(_is_number(v) for v in values))
    return numeric


def _check_length(name: str, values: Sequence[object] | None, expected: int, what: str) -> None:
    if values is not None and len(values) != expected:
        raise RenderError(f"{name} has {len(values)} entries; the table has {expected} {what}")


def _clean_svg(svg: str) -> str:
    """SVG markup ready to inline: no XML declaration, DOCTYPE, metadata or comments; only internal references."""
    cleaned = _SVG_NOISE.sub("", _DOCTYPE.sub("", _XML_DECLARATION.sub("", svg))).strip()
    if not cleaned.lower().startswith("<svg"):
        raise RenderError("svg must be SVG markup starting with <svg (after an optional XML declaration/DOCTYPE)")
    external = _SVG_REFERENCE.search(cleaned)
    if external:
        raise RenderError(
            f"svg refers to {external.group(1)!r}; only #fragment and data: references can be shown offline"
        )
    return cleaned


class HtmlPage:
    """A builder of one self-contained HTML page; blocks appear in the order they are added.

    Every method that adds a block returns the page, so calls can be chained. ``render()`` gives the page.
    """

    def __init__(self, title: str) -> None:
        self.title = title
        self._blocks: list[list[str]] = [[]]  # a stack: details() collects its blocks in a new list
        self._ids: set[str] = set()
        self._tables = 0
        self._svg_classes: dict[str, str] = {}  # declarations of an SVG style attribute -> its class
        self._svg_rules: dict[str, None] = {}  # rules of SVG <style> elements, once each, in order

    def _svg_styles_to_classes(self, svg: str) -> str:
        """``svg`` without ``<style>`` elements or ``style`` attributes: their CSS goes to the page's style block
        (see the module docstring)."""

        def element(match: re.Match[str]) -> str:
            body = _CDATA.sub(r"\1", match.group(1) or "")
            rules = _css_text(body, "<style> element")
            if rules:
                self._svg_rules.setdefault(rules)
            return ""

        def tag(match: re.Match[str]) -> str:
            markup = match.group(0)
            found = _STYLE_ATTRIBUTE.search(markup)
            if found is None:
                return markup
            declarations = _css_text(found.group(1) if found.group(1) is not None else found.group(2) or "",
                                     "style attribute")
            markup = markup[:found.start()] + markup[found.end():]
            if _STYLE_ATTRIBUTE.search(markup):
                raise RenderError(f"svg element with two style attributes: {match.group(0)[:80]!r}")
            if not declarations:
                return markup
            name = self._svg_classes.setdefault(declarations, f"gs-s{len(self._svg_classes) + 1}")
            existing = _CLASS_ATTRIBUTE.search(markup)
            if existing is None:
                end = len(markup) - (2 if markup.endswith("/>") else 1)
                return f'{markup[:end]} class="{name}"{markup[end:]}'
            classes = existing.group(1) if existing.group(1) is not None else existing.group(2) or ""
            return f'{markup[:existing.start()]} class="{classes} {name}"{markup[existing.end():]}'

        return _SVG_TAG.sub(tag, _SVG_STYLE_ELEMENT.sub(element, svg))

    def _style(self) -> str:
        """The page's one style block: the layout, then the rules taken out of inlined SVG."""
        rules = [*self._svg_rules, *(f".{name} {{ {css} }}" for css, name in self._svg_classes.items())]
        return STYLE + "".join(f"{rule}\n" for rule in rules)

    def _add(self, markup: str) -> Self:
        self._blocks[-1].append(markup)
        return self

    def _unique_id(self, wanted: str) -> str:
        base = sanitize_id(wanted)
        candidate, n = base, 1
        while candidate in self._ids:
            n += 1
            candidate = f"{base}-{n}"
        self._ids.add(candidate)
        return candidate

    def heading(self, text: str, level: int = 2) -> Self:
        """A heading ``<h{level}>``; level 1 is the page title's, so sections usually use 2 and below."""
        if not 1 <= level <= 6:
            raise RenderError(f"heading level must be 1 to 6, got {level}")
        return self._add(f"<h{level}>{_text(text)}</h{level}>")

    def paragraph(self, text: str) -> Self:
        """A paragraph of plain text."""
        return self._add(f"<p>{_text(text)}</p>")

    def preformatted(self, text: str) -> Self:
        """Text shown as is in a fixed-width font (e.g. the conventions block or a text table)."""
        return self._add(f"<pre>{_text(text)}</pre>")

    def table(
        self,
        header: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        *,
        caption: str | None = None,
        sortable: bool = True,
        table_id: str | None = None,
        numeric: Sequence[bool] | None = None,
        row_classes: Sequence[str | None] | None = None,
        cell_classes: Sequence[Sequence[str | None]] | None = None,
    ) -> Self:
        """A table; floats show 4 decimals, ``None``/NaN an en dash, numbers keep their raw ``data-value``.

        ``numeric`` says per column whether it is right-aligned and sorted as numbers (default: columns
        holding only numbers and ``None``). ``row_classes`` and ``cell_classes`` (one list per row) add CSS
        classes such as ``better``, ``worse`` or ``significant``. ``table_id`` is sanitised and made unique;
        by default tables are numbered ``table-1``, ``table-2``, ...
        """
        width = len(header)
        for i, row in enumerate(rows):
            if len(row) != width:
                raise RenderError(f"row {i} has {len(row)} cells; the header has {width}")
        _check_length("numeric", numeric, width, "columns")
        _check_length("row_classes", row_classes, len(rows), "rows")
        _check_length("cell_classes", cell_classes, len(rows), "rows")
        self._tables += 1
        ident = self._unique_id(table_id if table_id is not None else f"table-{self._tables}")
        kinds = list(numeric) if numeric is not None else _numeric_columns(rows, width)
        head = "".join(self._header_cell(h, kind, sortable) for h, kind in zip(header, kinds, strict=True))
        body = "\n".join(
            self._row(row, kinds, row_classes[i] if row_classes else None, cell_classes[i] if cell_classes else None)
            for i, row in enumerate(rows)
        )
        cls = ' class="sortable"' if sortable else ""
        cap = f"<caption>{_text(caption)}</caption>" if caption is not None else ""
        return self._add(
            f'<div class="table-wrap"><table id="{ident}"{cls}>{cap}\n'
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table></div>"
        )

    @staticmethod
    def _header_cell(text: str, numeric: bool, sortable: bool) -> str:
        cls = ' class="num"' if numeric else ""
        kind = "number" if numeric else "text"
        if not sortable:
            return f'<th scope="col"{cls}>{_text(text)}</th>'
        return (
            f'<th scope="col"{cls} data-type="{kind}" aria-sort="none">'
            f'<button type="button" class="sort">{_text(text)}<span class="arrow" aria-hidden="true"></span>'
            "</button></th>"
        )

    @staticmethod
    def _row(row: Sequence[Cell], kinds: Sequence[bool], row_class: str | None,
             cell_classes: Sequence[str | None] | None) -> str:
        if cell_classes is not None and len(cell_classes) != len(row):
            raise RenderError(f"cell_classes has {len(cell_classes)} entries for a row of {len(row)} cells")
        extras = cell_classes if cell_classes is not None else [None] * len(row)
        cells = "".join(_cell(v, k, c) for v, k, c in zip(row, kinds, extras, strict=True))
        tokens = " ".join(sanitize_id(c, "c") for c in (row_class or "").split())
        return f'<tr class="{tokens}">{cells}</tr>' if tokens else f"<tr>{cells}</tr>"

    def figure(self, svg: str | None = None, png: bytes | None = None, caption: str = "", alt: str = "") -> Self:
        """A figure from SVG markup (inlined) or PNG bytes (a ``data:`` URI); exactly one of the two.

        ``alt`` describes the image for screen readers; ``caption`` is shown under it.
        """
        if (svg is None) == (png is None):
            raise RenderError("figure takes exactly one of svg= or png=")
        if svg is not None:
            markup = self._svg_styles_to_classes(_clean_svg(svg))
            image = f'<div class="svg" role="img" aria-label="{_text(alt)}">{markup}</div>'
        elif png is not None:
            if not png.startswith(PNG_SIGNATURE):
                raise RenderError("png must be the bytes of a PNG file (they start with \\x89PNG)")
            data = base64.b64encode(png).decode("ascii")
            image = f'<img src="data:image/png;base64,{data}" alt="{_text(alt)}">'
        cap = f"<figcaption>{_text(caption)}</figcaption>" if caption else ""
        return self._add(f"<figure>{image}{cap}</figure>")

    @contextmanager
    def details(self, summary: str, *, open: bool = False) -> Iterator[Self]:
        """A collapsible section: blocks added inside the ``with`` go into it (long per-query tables).

        Collapsed by default (``open=True`` to show it expanded); printing expands every section.
        """
        self._blocks.append([])
        try:
            yield self
        finally:
            inner = "\n".join(self._blocks.pop())
        attr = " open" if open else ""
        self._add(f"<details{attr}><summary>{_text(summary)}</summary>\n{inner}\n</details>")

    def render(self) -> str:
        """The whole page as one string (deterministic: the same calls give the same bytes)."""
        if len(self._blocks) != 1:
            raise RenderError("render() called inside an unfinished details() section")
        body = "\n".join(self._blocks[0])
        style = self._style()
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(style, SCRIPT)}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="gainscope {_text(__version__)}">\n'
            f"<title>{_text(self.title)}</title>\n"
            '<link rel="icon" href="data:,">\n'  # no favicon request
            f"<style>{style}</style>\n</head>\n<body>\n<main>\n"
            f"<h1>{_text(self.title)}</h1>\n{body}\n</main>\n"
            f"<footer>Made with gainscope {_text(__version__)}.</footer>\n"
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
        )
