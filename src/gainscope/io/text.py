"""Opening input files: compression, encoding, byte order marks and Unicode forms of ids.

Rules implemented here, shared by every file reader:

* **Compression.** A file whose first two bytes are the gzip magic number (``1f 8b``) is decompressed
  transparently, whatever its name.
* **Encoding.** Files are UTF-8 unless ``encoding=`` says otherwise. A UTF-8 byte order mark at the very
  start of the file is dropped (``utf-8-sig`` behaviour): it never becomes part of the first query id.
  Bytes that are not valid in the encoding stop the reading with a :class:`~gainscope.errors.FormatError`
  that names the file, the line and the byte offset, and suggests ``encoding=``. Any other encoding is
  decoded once and handed on as UTF-8 text, so the rest of the package only ever sees UTF-8 bytes.
* **Lines.** Lines end at ``\\n``; a ``\\r`` before it is whitespace like any other. Line numbers are
  1-based and count every physical line, comments and blank lines included.
* **Comments.** A line whose first byte is ``#`` (after the BOM of line 1) is a comment
  (:func:`is_comment`); a ``#`` anywhere else is data, so ids such as ``doc#1`` are read whole.
* **Unicode forms of ids.** Ids are compared as exact strings, so ``"café"`` written with a combining
  accent (NFD) does not match the precomposed form (NFC). With ``normalize_ids="NFC"`` (or ``"NFKC"``,
  ``"NFD"``, ``"NFKD"``) every id is normalised and the number of ids changed goes into the notes;
  without it, ids that are not NFC raise one :class:`~gainscope.errors.InputWarning` per input naming an
  example and the option.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import polars as pl

from gainscope.errors import FormatError, InputError, PolicyError, UnknownFormatError

__all__ = [
    "BOM",
    "NORMAL_FORMS",
    "TextFile",
    "canonical_encoding",
    "changed_ids",
    "decode_utf8",
    "is_comment",
    "normalize_id_columns",
    "not_nfc_warning",
]

BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
HEAD_BYTES = 1 << 16


def canonical_encoding(encoding: str) -> str:
    """The codec name for ``encoding`` (``"utf-8"`` for every UTF-8 spelling, ``utf-8-sig`` included)."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise UnknownFormatError(
            f"unknown encoding {encoding!r}; give a Python codec name such as 'utf-8', 'latin-1' or 'cp1252'"
        ) from None
    return "utf-8" if name in ("utf-8", "utf-8-sig") else name


def _decode_error(name: str, data: bytes, exc: UnicodeDecodeError, *, encoding: str, base: int = 0,
                  line: int | None = None) -> FormatError:
    """A FormatError for undecodable bytes: file, line, byte offset, the byte, and the fix."""
    offset = base + exc.start
    if line is None:
        line = data[: exc.start].count(b"\n") + 1
    bad = exc.object[exc.start: exc.start + 1]
    shown = f"byte 0x{bad[0]:02x}" if bad else "a truncated sequence"
    return FormatError(
        f"cannot decode {shown} at byte offset {offset} as {encoding}; if the file uses another encoding, "
        f"pass it with encoding= (for example encoding='latin-1' or encoding='cp1252')",
        path=name, line=line, text=None)


def decode_utf8(data: bytes, name: str) -> str:
    """Decode a whole UTF-8 buffer (a BOM already removed), or raise a FormatError with line and offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(name, data, exc, encoding="UTF-8") from None


class TextFile:
    """One input file: display name, gzip compression and encoding, read as UTF-8 bytes.

    ``name`` is the path as the caller gave it (used in every message). ``read_bytes()`` returns the whole
    content decompressed and converted to UTF-8 (BOM kept, so offsets stay true); ``lines()`` streams
    physical lines with their numbers and byte offsets, the BOM removed from line 1.
    """

    def __init__(self, path: str | os.PathLike[str], encoding: str = "utf-8") -> None:
        self.path = os.fspath(path)
        self.name = str(path)
        self.encoding = canonical_encoding(encoding)
        if not os.path.exists(self.path):
            raise InputError(f"no such file: {self.name!r}")
        if os.path.isdir(self.path):
            raise UnknownFormatError(f"{self.name} is a directory; give the path of a file "
                                     f"(for a BEIR folder, its qrels/<split>.tsv)")
        with open(self.path, "rb") as fh:
            self.gzip = fh.read(2) == GZIP_MAGIC
        self._data: bytes | None = None

    # ------------------------------------------------------------------ properties
    @property
    def size(self) -> int:
        """Size on disk in bytes (compressed size for gzip files)."""
        return os.path.getsize(self.path)

    @property
    def direct(self) -> bool:
        """True when polars can read the file from its path (plain UTF-8, not compressed)."""
        return not self.gzip and self.encoding == "utf-8"

    @property
    def stem(self) -> str:
        """The file name without directory, ``.gz`` and one more extension (a default run name)."""
        name = Path(self.path).name
        if name.endswith(".gz"):
            name = name[:-3]
        return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name

    @property
    def suffix(self) -> str:
        """The lower-case extension that says the format (``.gz`` ignored), e.g. ``".jsonl"``."""
        name = Path(self.path).name.lower()
        if name.endswith(".gz"):
            name = name[:-3]
        return Path(name).suffix

    # ------------------------------------------------------------------ content
    def _raw(self) -> bytes:
        if self.gzip:
            with gzip.open(self.path, "rb") as fh:
                return fh.read()
        with open(self.path, "rb") as fh:
            return fh.read()

    def read_bytes(self) -> bytes:
        """The whole content, decompressed and converted to UTF-8 (cached)."""
        if self._data is None:
            data = self._raw()
            if self.encoding != "utf-8":
                data = self._transcode(data)
            self._data = data
        return self._data

    def _transcode(self, data: bytes) -> bytes:
        try:
            text = data.decode(self.encoding)
        except UnicodeDecodeError as exc:
            raise _decode_error(self.name, data, exc, encoding=self.encoding) from None
        return text.encode("utf-8")

    def head(self, size: int = HEAD_BYTES) -> bytes:
        """The first ``size`` bytes of the UTF-8 content (for format sniffing)."""
        if self._data is not None or self.encoding != "utf-8":
            return self.read_bytes()[:size]
        opener = gzip.open if self.gzip else open
        with opener(self.path, "rb") as fh:
            return fh.read(size)

    def chunks(self, size: int = 1 << 24) -> Iterator[bytes]:
        """The UTF-8 content in pieces of about ``size`` bytes, each ending at a line end (streamed)."""
        if self._data is not None or self.encoding != "utf-8":
            data = self.read_bytes()
            start = 0
            while start < len(data):
                end = data.find(b"\n", min(start + size, len(data)))
                end = len(data) if end < 0 else end + 1
                yield data[start:end]
                start = end
            return
        opener = gzip.open if self.gzip else open
        with opener(self.path, "rb") as fh:
            carry = b""
            while block := fh.read(size):
                block = carry + block
                cut = block.rfind(b"\n") + 1
                if cut == 0:
                    carry = block
                    continue
                carry = block[cut:]
                yield block[:cut]
            if carry:
                yield carry

    def has_bom(self) -> bool:
        """True when the file starts with a UTF-8 byte order mark."""
        if self.encoding != "utf-8":
            return False
        return self.head(3) == BOM

    def polars_source(self) -> str | bytes:
        """What to hand to polars: the path itself when possible, else the UTF-8 bytes."""
        return self.path if self.direct else self.read_bytes()

    def lines(self) -> Iterator[tuple[int, int, bytes]]:
        """Yield ``(line_number, byte_offset, raw_line)``; the BOM is removed from line 1.

        ``raw_line`` keeps its line ending. Plain UTF-8 files are streamed, not loaded whole.
        """
        if self._data is not None or self.encoding != "utf-8":
            yield from _number_lines(io.BytesIO(self.read_bytes()))
            return
        opener = gzip.open if self.gzip else open
        with opener(self.path, "rb") as fh:
            yield from _number_lines(fh)

    def decode_line(self, raw: bytes, lineno: int, offset: int) -> str:
        """Decode one raw line as UTF-8, or raise a FormatError naming the line and byte offset."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            enc = "UTF-8" if self.encoding == "utf-8" else "UTF-8 (converted)"
            raise _decode_error(self.name, raw, exc, encoding=enc, base=offset, line=lineno) from None


def is_comment(line: bytes) -> bool:
    """The comment rule of every line-based reader: ``line`` (as :meth:`TextFile.lines` yields it, the BOM of
    line 1 removed) is a comment when its first byte is ``#``. A ``#`` anywhere else is data -- ids such as
    ``doc#1`` or ``msmarco_v2.1_doc_00_0#0_1`` are read whole -- and so is an indented ``#`` line."""
    return line[:1] == b"#"


def _number_lines(stream: Iterable[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """Number binary lines (binary iteration splits at ``\\n`` only, never at a lone ``\\r``)."""
    offset = 0
    for lineno, raw in enumerate(stream, start=1):
        start = offset
        offset += len(raw)
        if lineno == 1 and raw.startswith(BOM):
            raw = raw[3:]
            start += 3
        yield lineno, start, raw


# ---------------------------------------------------------------------- Unicode forms of ids
def check_normal_form(form: str | None) -> str | None:
    """Validate ``normalize_ids``: None or one of NFC, NFKC, NFD, NFKD (case-insensitive)."""
    if form is None:
        return None
    upper = str(form).upper()
    if upper not in NORMAL_FORMS:
        raise PolicyError(f"normalize_ids must be None or one of {', '.join(map(repr, NORMAL_FORMS))}; "
                          f"got {form!r}")
    return upper


_NON_ASCII = r"[^\x00-\x7F]"


def changed_ids(column: pl.Series, form: str) -> pl.Series:
    """The distinct ids of ``column`` that ``form`` would change (ASCII ids never change)."""
    candidates = column.filter(column.str.contains(_NON_ASCII)).unique(maintain_order=True)
    return candidates.filter(candidates != candidates.str.normalize(form))  # type: ignore[arg-type]


def normalize_id_columns(frame: pl.DataFrame, form: str | None, *, where: str = ""
                         ) -> tuple[pl.DataFrame, list[str], list[str]]:
    """Normalise (or check) the ``query_id`` and ``doc_id`` columns.

    Returns ``(frame, notes, warnings)``. With ``form`` set, ids are normalised and a note counts the ids
    changed; without it, one warning names an example of an id that is not NFC.
    """
    notes: list[str] = []
    warns: list[str] = []
    columns = [c for c in ("query_id", "doc_id") if c in frame.columns]
    if form is None:
        for col in columns:
            changed = changed_ids(frame[col], "NFC")
            if changed.len():
                warns.append(not_nfc_warning(where, col, changed.len(), changed[0]))
                break
        return frame, notes, warns
    total = sum(changed_ids(frame[col], form).len() for col in columns)
    if total:
        frame = frame.with_columns(pl.col(c).str.normalize(form) for c in columns)  # type: ignore[arg-type]
        notes.append(f"ids normalised to {form} ({total} distinct id(s) changed)")
    return frame, notes, warns


def not_nfc_warning(where: str, column: str, count: int, example: str) -> str:
    """The warning for ``count`` distinct ids of ``column`` (``query_id`` or ``doc_id``) that are not NFC."""
    label = "query" if column == "query_id" else "doc"
    return (f"{where}{count} distinct {label} id(s) are not in Unicode NFC form, e.g. {example!r} (code points "
            f"{_code_points(example)}); ids that look the same may not match; read with normalize_ids='NFC' to "
            "normalise them")


def _code_points(text: str, limit: int = 12) -> str:
    shown = " ".join(f"U+{ord(ch):04X}" for ch in text[:limit])
    return shown + (" ..." if len(text) > limit else "")
