"""Compressed input files, gzip and zstd: known by their first bytes, decompressed in blocks.

* **gzip** (first bytes ``1f 8b``, RFC 1952): members one after another, zero bytes allowed after each, read as
  Python's :mod:`gzip` reads them: each member's header is parsed, its deflate data inflated, and its CRC-32 and
  length are checked. The deflate data is inflated by ISA-L (the ``isal`` package, about three times zlib's speed
  on this work) where it is installed, else by zlib; a member ISA-L refuses is inflated again by zlib, so that
  damage is always reported in zlib's words.
* **zstd** (first bytes ``28 b5 2f fd``, RFC 8878): frames one after another (skippable frames included), by the
  ``zstandard`` package.

:func:`decompressed` yields the content in blocks of at most ``size`` bytes (zstd: about ``size``), so that no
reader holds the whole content: the line readers of :mod:`gainscope.io.text` read through it, and the scanner of
:mod:`gainscope.io.scan` scans its blocks as they come. Damage raises what Python's :mod:`gzip` raises for the same
file -- :class:`EOFError` when the data ends inside a member or frame (a truncated file), :class:`zlib.error`
for corrupt deflate data, :class:`gzip.BadGzipFile` for a bad header, checksum or length --, and
``zstandard.ZstdError`` for corrupt zstd data; :class:`gainscope.io.text.TextFile` turns each into a
:class:`~gainscope.errors.FormatError` naming the file.
"""

from __future__ import annotations

import functools
import gzip
import struct
import sys
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from gainscope.errors import MissingDependencyError

__all__ = ["COMPRESSIONS", "compression_of", "decompressed", "is_zstd_error", "load_zstandard"]

#: first bytes of each compressed format
COMPRESSIONS = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}
MAGIC_BYTES = 4  # enough first bytes to tell them apart

_READ = 1 << 20  # compressed bytes read at a time
_TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"  # gzip's own words
_FTEXT, _FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 1, 2, 4, 8, 16

@functools.cache
def _isal() -> Any:
    """ISA-L's inflate (the same results as zlib's, faster), or None where the optional package is missing;
    imported on the first compressed file, not at start-up."""
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - depends on the platform's wheels
        return None
    return isal_zlib


def compression_of(head: bytes) -> str | None:
    """``"gzip"`` or ``"zstd"`` when ``head`` (a file's first bytes) starts with that format's magic number."""
    return next((kind for kind, magic in COMPRESSIONS.items() if head.startswith(magic)), None)


def load_zstandard() -> Any:
    """The ``zstandard`` module, or a MissingDependencyError saying how to install it."""
    try:
        import zstandard
    except ImportError:
        raise MissingDependencyError("reading zstd-compressed files needs the zstandard package: "
                                     "pip install zstandard") from None
    return zstandard


def is_zstd_error(exc: BaseException) -> bool:
    """True for the zstandard package's error (damaged zstd data), recognised without importing the package."""
    zstandard = sys.modules.get("zstandard")
    return zstandard is not None and isinstance(exc, zstandard.ZstdError)


def decompressed(raw: BinaryIO, kind: str, size: int = 1 << 22) -> Iterator[bytes]:
    """The decompressed content of ``raw`` (a binary file positioned at its start, seekable for ISA-L to be used)
    in blocks; see the module docstring for the errors."""
    if kind == "gzip":
        return _gzip(_Input(raw), size)
    if kind == "zstd":
        return _zstd(raw, size)
    raise ValueError(f"unknown compression {kind!r}")


class _Input:
    """Compressed bytes read in pieces, with what a decoder did not use put back."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.pending = b""
        self.seekable = raw.seekable()

    def read(self, n: int = _READ) -> bytes:
        if self.pending:
            data, self.pending = self.pending[:n], self.pending[n:]
            return data
        return self.raw.read(n)

    def exact(self, n: int) -> bytes:
        data = self.read(n)
        while len(data) < n:
            more = self.read(n - len(data))
            if not more:
                raise EOFError(_TRUNCATED)
            data += more
        return data

    def unread(self, data: bytes) -> None:
        self.pending = data + self.pending

    def tell(self) -> int:
        return self.raw.tell() - len(self.pending)

    def seek(self, offset: int) -> None:
        self.raw.seek(offset)
        self.pending = b""


def _gzip(src: _Input, size: int) -> Iterator[bytes]:
    first = True
    while True:
        magic = src.read(2)
        if not magic and not first:
            return
        if magic != COMPRESSIONS["gzip"]:
            raise gzip.BadGzipFile(f"Not a gzipped file ({magic!r})")
        first = False
        _skip_header(src)
        yield from _member(src, size)
        while (byte := src.read(1)) == b"\x00":  # zero bytes after a member are padding
            pass
        src.unread(byte)


def _skip_header(src: _Input) -> None:
    """The rest of a member's header, after its magic number (RFC 1952 2.3.1)."""
    method, flags = struct.unpack("<BB6x", src.exact(8))
    if method != 8:
        raise gzip.BadGzipFile("Unknown compression method")
    if flags & _FEXTRA:
        (length,) = struct.unpack("<H", src.exact(2))
        src.exact(length)
    for flag in (_FNAME, _FCOMMENT):
        if flags & flag:
            while src.exact(1) != b"\x00":
                pass
    if flags & _FHCRC:
        src.exact(2)


def _member(src: _Input, size: int) -> Iterator[bytes]:
    """One member's content, its CRC-32 and length checked against its trailer. ISA-L inflates it when it can;
    when ISA-L refuses the data, zlib inflates the member again from its start (what was yielded already is not
    yielded twice), to say what is wrong in zlib's words or, should zlib take the data, to go on."""
    start = src.tell() if src.seekable else -1
    libs: list[Any] = [_isal(), zlib] if _isal() is not None and start >= 0 else [zlib]
    done = 0  # bytes of the member yielded so far
    for lib in libs:
        crc = produced = 0
        try:
            for block in _inflate(src, lib.decompressobj(-zlib.MAX_WBITS), size):
                crc = lib.crc32(block, crc)
                produced += len(block)
                if produced > done:
                    yield block[len(block) - (produced - done):]
                    done = produced
            break
        except EOFError:
            raise
        except Exception:
            if lib is zlib:
                raise
            src.seek(start)
    stored_crc, stored_size = struct.unpack("<II", src.exact(8))
    if stored_crc != crc:
        raise gzip.BadGzipFile(f"CRC check failed {hex(stored_crc)} != {hex(crc)}")
    if stored_size != produced & 0xFFFFFFFF:
        raise gzip.BadGzipFile("Incorrect length of data produced")


def _inflate(src: _Input, inflate: Any, size: int) -> Iterator[bytes]:
    """The output of one deflate stream, in blocks of at most ``size`` bytes; what follows it is put back."""
    data = b""
    while not inflate.eof:
        if not data:
            data = src.read(max(_READ, size // 4))
            if not data:
                raise EOFError(_TRUNCATED)
        out = inflate.decompress(data, size)
        data = inflate.unconsumed_tail
        if out:
            yield out
    # everything after the stream's end is in unused_data (zlib leaves a stale unconsumed_tail beside it when the
    # end came in a call whose output was cut at ``size``: putting both back read the trailer twice)
    src.unread(inflate.unused_data)


def _zstd(raw: BinaryIO, size: int) -> Iterator[bytes]:
    """The frames' content, joined into blocks of about ``size`` bytes; the data ending inside a frame is a
    truncated file (zstandard itself returns what it has)."""
    zstandard = load_zstandard()
    new = zstandard.ZstdDecompressor().decompressobj
    frame, started = new(), False
    pieces: list[bytes] = []
    held = 0
    while data := raw.read(_READ):
        while data:
            out = frame.decompress(data)
            started = True
            if out:
                pieces.append(out)
                held += len(out)
            if frame.eof:
                data = frame.unused_data
                frame, started = new(), False
            else:
                data = b""
        if held >= size:
            yield b"".join(pieces)
            pieces, held = [], 0
    if started:
        raise EOFError("the zstd data ends inside a frame")
    if pieces:
        yield b"".join(pieces)
