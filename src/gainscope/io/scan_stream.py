"""Compressed TREC runs through the C scanner: decompressed into reusable buffers, cut at query boundaries, scanned
in parallel threads while the next content is decompressed.

The content comes from :meth:`gainscope.io.text.TextFile.into_buffers` in chunks of about :data:`CHUNK_BYTES`, each in a
buffer with :data:`HEADROOM` free bytes before it. The lines of the query a chunk ends in (the query may go on in the
next chunk) are carried over: copied into the headroom of the next chunk, so that the next piece is one run of
memory without joining the chunks (a carried part longer than the headroom -- a query of more than 1 MiB -- is
joined with the chunk instead). Each piece, whole queries from the start of the carried part to the start of the
last query of the chunk, is scanned in place (``scan(buffer, start, end)``) by one of the threads; its buffer goes
back to be filled again when the scan is done. So memory holds a few chunks, never the whole content, and the only
copies are the carried lines.

Where a chunk's last query begins is found by bisection over the chunk's lines (:func:`last_query_start`), a few
dozen lines read per chunk rather than every line of the last query.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from gainscope.errors import FormatError
from gainscope.io.compressed import Buffers
from gainscope.io.text import BOM, MAX_LINE_BYTES, TextFile

__all__ = ["CHUNK_BYTES", "HEADROOM", "last_query_start", "query_pieces", "scan_pieces"]

CHUNK_BYTES = 4 << 20  # decompressed content is scanned in pieces of about this size (4 MiB: measured
# best of 2 to 32 MiB on M, the pieces staying in the cores' caches while scanned)
HEADROOM = 1 << 20  # free bytes before each chunk, for the lines carried over from the chunk before

#: a piece to scan: its bytes are ``data[start:end]``; ``chunk`` is the buffer to give back once it is scanned (None
#: when there is none to give back)
Piece = tuple[bytearray | bytes, int, int, bytearray | None]


def scan_pieces(src: TextFile, scan: Callable[[bytearray | bytes, int, int], dict[str, Any]],
                size: int | None = None) -> list[dict[str, Any]] | str:
    """``scan`` over the pieces of ``src``'s content (:func:`query_pieces`), in threads while the next chunks are
    decompressed. Returns the results in order -- once a piece is refused (its result has ``"fallback"``), the
    results up to it, the rest not decompressed --, or why the readers must read the file (damaged data: the
    readers then say what is wrong, as they would have met it; a line longer than the limit of a line)."""
    size = size or CHUNK_BYTES
    workers = max(1, min(os.cpu_count() or 1, 8))
    buffers = Buffers(2 * workers + 2)  # being filled (zstd frames: up to one per thread), waiting, being scanned
    results: list[Future[dict[str, Any]]] = []
    refused: list[bool] = []

    def done(future: Future[dict[str, Any]], chunk: bytearray | None) -> None:
        if chunk is not None:
            buffers.give(chunk)
        if not future.cancelled() and future.exception() is None and "fallback" in future.result():
            refused.append(True)

    with ThreadPoolExecutor(workers) as pool:
        chunks = src.into_buffers(buffers, size, HEADROOM, pool, ahead=workers)
        pieces = query_pieces(chunks, buffers, HEADROOM)
        try:
            with contextlib.closing(chunks), contextlib.closing(pieces):
                for piece in pieces:
                    if isinstance(piece, str):
                        _cancel(results)
                        return piece
                    data, start, end, chunk = piece
                    future = pool.submit(scan, data, start, end)
                    future.add_done_callback(lambda f, chunk=chunk: done(f, chunk))  # type: ignore[misc]
                    results.append(future)
                    if refused:
                        break
        except FormatError as exc:
            _cancel(results)
            return f"damaged compressed data ({exc})"
        if refused:
            _cancel(results)
        return [f.result() for f in results if not f.cancelled()]


def _cancel(futures: list[Future[dict[str, Any]]]) -> None:
    for future in futures:
        future.cancel()


def query_pieces(chunks: Iterable[tuple[bytearray, int]], buffers: Buffers, headroom: int
                 ) -> Generator[Piece | str, None, None]:
    """The content of ``chunks`` (``(buffer, n)``: ``n`` bytes at ``buffer[headroom:]``, in order) cut at query
    boundaries into pieces, each made of whole queries (a query longer than a chunk is one piece); a byte order
    mark at the start is dropped. A chunk's buffer is in the piece that ends in it, to be given back to ``buffers``
    once the piece is scanned (or given back here when no piece ends in it). Yields a reason instead of a piece
    when a line is longer than the limit of a line (the readers then name it)."""
    carry = b""  # the lines carried over: the start of the query the last chunk ended in
    at_start = True  # nothing cut yet, the byte order mark not yet looked for
    for buffer, n in chunks:
        chunk: bytearray | None = buffer
        if len(carry) <= headroom:
            data, begin, end = buffer, headroom - len(carry), headroom + n
            buffer[begin:headroom] = carry
        else:  # a query longer than the headroom: joined with the chunk
            data, begin, end = bytearray(carry) + memoryview(buffer)[headroom:headroom + n], 0, len(carry) + n
            buffers.give(buffer)
            chunk = None
        if at_start:
            if end - begin < len(BOM) and BOM.startswith(data[begin:end]):
                # a byte order mark cut by the chunk: whole before it is dropped
                carry = bytes(memoryview(data)[begin:end])
                _give(buffers, chunk)
                continue
            begin += len(BOM) if data.startswith(BOM, begin, end) else 0
            at_start = False
        if end - (data.rfind(b"\n", begin, end) + 1) > MAX_LINE_BYTES:
            _give(buffers, chunk)
            yield "a line longer than the limit"
            return
        cut = last_query_start(data, begin, end)
        carry = bytes(memoryview(data)[cut:end])
        if cut > begin:
            yield data, begin, cut, chunk
        else:
            _give(buffers, chunk)
    if at_start:
        carry = carry.removeprefix(BOM)
    if carry:
        yield carry, 0, len(carry), None


def _give(buffers: Buffers, chunk: bytearray | None) -> None:
    if chunk is not None:
        buffers.give(chunk)


def last_query_start(data: bytes | bytearray, lo: int, hi: int) -> int:
    """Where the last query of ``data[lo:hi]`` begins: the start of the line after the last data line of another
    query, or ``lo`` when every complete line is of one query (the bytes after the last newline, an incomplete line,
    are not read). Comments and blank lines go with the query after them.

    The last data line's query id ``q`` is read first; then lines at positions going back from it in steps that
    double, until one is of another query, and the boundary is bisected between the two: the first data line at
    or after a line start is of ``q`` from the boundary on. When a query's lines are not all together the
    position found is still a boundary between two queries (the line before it is a data line of another query);
    the scanner then notices the query met twice."""
    end = data.rfind(b"\n", lo, hi) + 1  # the complete lines end here
    if end <= lo:
        return lo
    b = end
    last: bytes | bytearray | None = None
    while b > lo and last is None:  # the last data line: its start b, its query last
        b = max(data.rfind(b"\n", lo, b - 1) + 1, lo)
        last = _data_query(data, b, end, one_line=True)
    if last is None:
        return lo
    step = 4096
    while True:  # gallop back from b (a line start whose first data line is of query last)
        s = lo if b - step <= lo else max(data.rfind(b"\n", lo, b - step) + 1, lo)
        if _data_query(data, s, b) in (None, last):
            if s == lo:
                return lo
            b, step = s, step * 2
            continue
        a = s  # a line start whose first data line, before b, is of another query
        break
    while True:  # bisect: a's first data line is of another query, b's of query last
        after_a = data.find(b"\n", a, b) + 1
        if after_a >= b:
            return b
        s = max(data.rfind(b"\n", a, (a + b) // 2) + 1, after_a)
        if _data_query(data, s, b) in (None, last):
            b = s
        else:
            a = s


def _data_query(data: bytes | bytearray, s: int, end: int, one_line: bool = False) -> bytes | bytearray | None:
    """The query id of the first data line starting at or after ``s`` (a line start) and before ``end`` (a line
    start), or None when there are only comments and blank lines there (``one_line``: only the line at ``s`` is
    read)."""
    while s < end:
        e = data.find(b"\n", s, end)
        line = data[s:e]
        fields = line.split(None, 1)
        if fields and not line.startswith(b"#"):
            return fields[0]
        if one_line:
            return None
        s = e + 1
    return None
