"""Compressed input files, gzip and zstd: known by their first bytes, decompressed in blocks.

* **gzip** (first bytes ``1f 8b``, RFC 1952): members one after another, zero bytes allowed after each, read as
  Python's :mod:`gzip` reads them: each member's header is parsed, its deflate data inflated, and its CRC-32 and
  length are checked. The deflate data is inflated by ISA-L (the ``isal`` package, about three times zlib's speed
  on this work) where it is installed, else by zlib; a member ISA-L refuses is inflated again by zlib, so that
  damage is always reported in zlib's words.
* **zstd** (first bytes ``28 b5 2f fd``, or those of a skippable frame, ``5? 2a 4d 18``, with which ``pzstd``
  starts; RFC 8878): frames one after another (skippable frames included), by the ``zstandard`` package.

:func:`decompressed` yields the content in blocks of at most ``size`` bytes (zstd: about ``size``), so that no
reader holds the whole content. Damage raises what Python's :mod:`gzip` raises for the same
file -- :class:`EOFError` when the data ends inside a member or frame (a truncated file), :class:`zlib.error`
for corrupt deflate data, :class:`gzip.BadGzipFile` for a bad header, checksum or length --, and
``zstandard.ZstdError`` for corrupt zstd data; :class:`gainscope.io.text.TextFile` turns each into a
:class:`~gainscope.errors.FormatError` naming the file. It is the reference reader: the line readers read through
it, and its errors are the ones users see.

:func:`decompressed_into` is the fast path the scanner reads (:mod:`gainscope.io.scan_stream`): the content in
order, decompressed straight into reusable buffers (no bytes object per block, no joining), gzip by ISA-L's own
gzip reader (``isal.igzip``, which checks CRC-32 and length itself; zlib through :func:`decompressed` where
ISA-L is missing), zstd by zstandard's streaming reader. That reader does not notice a file that ends inside a
frame, so the frames are first walked by their headers and block headers (:func:`zstd_frames`, RFC 8878 3.1:
a few bytes per 128 KiB block): a file ending inside a frame is :class:`EOFError` before anything is decompressed.
When a zstd file holds several frames that each give their content size (``pzstd`` writes frames of about 8 MB,
each after a skippable frame giving its size), groups of frames are decompressed in parallel threads, each into its
own buffer. Its errors are of the same types as :func:`decompressed`'s, raised for the same files (its words may
differ: the scanner then leaves the file to the readers, which say what is wrong in theirs). ``tests/io/
test_compressed.py`` holds it to both: the same content, and an error for the same damaged files.
"""

from __future__ import annotations

import collections
import functools
import gzip
import io
import struct
import sys
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

if TYPE_CHECKING:  # the threads' modules are imported where a compressed file is read: a plain file never needs them
    import queue
    import threading
    from concurrent.futures import Executor, Future

from gainscope.errors import MissingDependencyError

__all__ = [
    "COMPRESSIONS",
    "BlockStream",
    "Buffers",
    "Frame",
    "compression_of",
    "decompressed",
    "decompressed_into",
    "is_zstd_error",
    "load_zstandard",
    "zstd_frames",
]

#: first bytes of each compressed format
COMPRESSIONS = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}
MAGIC_BYTES = 4  # enough first bytes to tell them apart

_READ = 1 << 20  # compressed bytes read at a time
_TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"  # gzip's own words
_FTEXT, _FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 1, 2, 4, 8, 16
_ZSTD_TRUNCATED = "the zstd data ends inside a frame"
_ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE_MAGIC = 0x184D2A50  # a skippable frame's magic number: this, any value of its low 4 bits
FRAME_CONTENT_MAX = 64 << 20  # zstd frames are decompressed in parallel when each holds at most this much content

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
    """``"gzip"`` or ``"zstd"`` when ``head`` (a file's first bytes) starts with that format's magic number; zstd
    data may also start with a skippable frame (``pzstd`` writes one before each frame, giving its size)."""
    kind = next((kind for kind, magic in COMPRESSIONS.items() if head.startswith(magic)), None)
    if kind is None and len(head) >= 4 and struct.unpack("<I", head[:4])[0] & 0xFFFFFFF0 == _SKIPPABLE_MAGIC:
        return "zstd"
    return kind


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
        raise EOFError(_ZSTD_TRUNCATED)
    if pieces:
        yield b"".join(pieces)


# ---------------------------------------------------------------------- the scanner's path: into reusable buffers
class BlockStream(io.RawIOBase):
    """A read-only stream over blocks of bytes (for :class:`io.BufferedReader`, or read with ``readinto``)."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self._block = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._block:
            block = next(self._blocks, None)
            if block is None:
                return 0
            self._block = memoryview(block)
        n = min(len(buffer), len(self._block))
        buffer[:n] = self._block[:n]
        self._block = self._block[n:]
        return n


class _IsalStream:
    """ISA-L's gzip reader, its errors of deflate data given zlib's type (:class:`zlib.error`), as
    :func:`decompressed` raises them."""

    def __init__(self, raw: BinaryIO) -> None:
        from isal import igzip

        self._file = igzip.IGzipFile(fileobj=raw, mode="rb")  # type: ignore[no-untyped-call]
        self._error = _isal().error

    def readinto(self, buffer: Any) -> int:
        try:
            n: int = self._file.readinto(buffer)
        except self._error as exc:
            raise zlib.error(str(exc)) from None
        return n


class Frame(NamedTuple):
    """A zstd frame of a file: where it starts, its length in bytes, and its content's size as its header gives it
    (None when the header does not give it; 0 for a skippable frame, which holds no content)."""

    offset: int
    length: int
    content_size: int | None
    skippable: bool


def zstd_frames(raw: BinaryIO) -> list[Frame]:
    """The frames of the zstd data in ``raw`` (a seekable binary file, from its start), found by reading their
    headers and their blocks' headers only (RFC 8878 3.1.1: magic number, frame header, blocks of a 3-byte header
    each, optional checksum; skippable frames, 3.1.2). Raises EOFError when the data ends inside a frame, and
    ``zstandard.ZstdError`` for bytes where a frame should begin that are not one, or a header whose reserved
    bits are set (what zstd says of them)."""
    zstandard = load_zstandard()
    size = raw.seek(0, io.SEEK_END)
    pos = 0
    frames: list[Frame] = []

    def read(at: int, n: int) -> bytes:
        if at + n > size:
            raise EOFError(_ZSTD_TRUNCATED)
        raw.seek(at)
        return raw.read(n)

    while pos < size:
        (magic,) = struct.unpack("<I", read(pos, 4))
        at = pos + 4
        if magic & 0xFFFFFFF0 == _SKIPPABLE_MAGIC:
            (length,) = struct.unpack("<I", read(at, 4))
            at += 4 + length
            content: int | None = 0
        elif magic == _ZSTD_MAGIC:
            (fhd,) = read(at, 1)
            if fhd & 0x08:
                raise zstandard.ZstdError("zstd frame header with a reserved bit set")
            single_segment = fhd >> 5 & 1
            fcs_bytes = (single_segment, 2, 4, 8)[fhd >> 6]
            header = 1 + (1 - single_segment) + (0, 1, 2, 4)[fhd & 3] + fcs_bytes
            content = None
            if fcs_bytes:
                content = int.from_bytes(read(at + header - fcs_bytes, fcs_bytes), "little")
                content += 256 if fcs_bytes == 2 else 0
            at += header
            last = 0
            while not last:
                block = int.from_bytes(read(at, 3), "little")
                last, kind = block & 1, block >> 1 & 3
                if kind == 3:
                    raise zstandard.ZstdError("zstd block of the reserved type")
                at += 3 + (1 if kind == 1 else block >> 3)  # an RLE block holds one byte
            at += 4 if fhd & 0x04 else 0  # the content checksum
        else:
            raise zstandard.ZstdError("Unknown frame descriptor")  # zstd's words
        if at > size:
            raise EOFError(_ZSTD_TRUNCATED)
        frames.append(Frame(pos, at - pos, content, magic != _ZSTD_MAGIC))
        pos = at
    return frames


class Buffers:
    """Reusable buffers for decompressed content: :meth:`take` waits for one given back with :meth:`give` (by the
    thread that is done with it) once ``count`` are out; a buffer too small for what is asked is replaced."""

    def __init__(self, count: int) -> None:
        import queue

        self._free: queue.SimpleQueue[bytearray] = queue.SimpleQueue()
        for _ in range(count):
            self._free.put(bytearray())

    def take(self, capacity: int) -> bytearray:
        buffer = self._free.get()
        return buffer if len(buffer) >= capacity else bytearray(capacity)

    def give(self, buffer: bytearray) -> None:
        self._free.put(buffer)


def decompressed_into(raw: BinaryIO, kind: str | None, buffers: Buffers, size: int, headroom: int,
                      pool: Executor | None = None, ahead: int = 2) -> Iterator[tuple[bytearray, int]]:
    """The content of ``raw`` (a binary file at its start; ``kind`` its compression, None for none) in order, as
    ``(buffer, n)``: the ``n`` bytes at ``buffer[headroom:headroom + n]``, ``n`` at most ``size`` (a group of zstd
    frames: their content), never 0. Buffers come from ``buffers``; whoever receives one gives it back. zstd frames
    are decompressed on ``pool``, up to ``ahead`` groups at a time, when there are several frames that all give
    their content size (see the module docstring). Errors: those of :func:`decompressed`."""
    if kind == "zstd":
        frames = zstd_frames(raw)
        raw.seek(0)
        data = [f for f in frames if not f.skippable]
        if pool is not None and len(data) > 1 and all(f.content_size is not None and f.content_size
                                                       <= FRAME_CONTENT_MAX for f in data):
            yield from _frames_in_parallel(raw, frames, buffers, size, headroom, pool, ahead)
            return
        zstandard = load_zstandard()
        stream: Any = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    elif kind == "gzip":
        stream = _IsalStream(raw) if _isal() is not None else BlockStream(_gzip(_Input(raw), 1 << 22))
    elif kind is None:
        stream = raw
    else:
        raise ValueError(f"unknown compression {kind!r}")
    while True:
        buffer = buffers.take(headroom + size)
        n = _fill(stream, memoryview(buffer)[headroom:headroom + size])
        if not n:
            buffers.give(buffer)
            return
        yield buffer, n
        if n < size:
            return


def _fill(stream: Any, view: memoryview) -> int:
    """Read from ``stream`` into ``view`` until it is full or the stream ends; the bytes read."""
    n = 0
    while n < len(view) and (got := stream.readinto(view[n:])):
        n += got
    return n


def _frames_in_parallel(raw: BinaryIO, frames: list[Frame], buffers: Buffers, size: int, headroom: int,
                        pool: Executor, ahead: int) -> Iterator[tuple[bytearray, int]]:
    """The content of zstd ``frames`` (all of whose data frames give their content size), in groups of consecutive
    frames of at most ``size`` bytes of content (a larger frame alone), each decompressed on ``pool`` into its own
    buffer."""
    groups: list[list[Frame]] = [[]]
    held = 0
    for frame in frames:
        content = frame.content_size or 0
        if content and held and held + content > size:  # frames without content go with the group before
            groups.append([])
            held = 0
        groups[-1].append(frame)
        held += content
    pending: collections.deque[tuple[Future[int], bytearray, int]] = collections.deque()
    try:
        for group in groups:
            while len(pending) >= ahead:
                if (done := _finished(pending.popleft(), buffers)) is not None:
                    yield done
            content = sum(f.content_size or 0 for f in group)
            buffer = buffers.take(headroom + content)
            raw.seek(group[0].offset)
            data = raw.read(group[-1].offset + group[-1].length - group[0].offset)
            out = memoryview(buffer)[headroom:headroom + content]
            pending.append((pool.submit(_decompress_frames, data, out), buffer, content))
        while pending:
            if (done := _finished(pending.popleft(), buffers)) is not None:
                yield done
    finally:  # stopped early (or an error): the jobs still out end before their buffers are given back
        for future, buffer, _ in pending:
            if not future.cancel():
                from concurrent.futures import wait

                wait([future])
            buffers.give(buffer)


def _finished(job: tuple[Future[int], bytearray, int], buffers: Buffers) -> tuple[bytearray, int] | None:
    """A group's buffer and content size once its frames are decompressed (their errors raised); None for a group
    without content (its buffer given back)."""
    future, buffer, content = job
    try:
        future.result()
    except BaseException:
        buffers.give(buffer)
        raise
    if not content:
        buffers.give(buffer)
        return None
    return buffer, content


@functools.cache
def _thread_state() -> threading.local:
    """Each thread's zstd decompressor (one may not serve two threads at once)."""
    import threading

    return threading.local()


def _decompress_frames(data: bytes, out: memoryview) -> int:
    """Decompress the zstd frames ``data`` into ``out``, which their content sizes fill exactly (every frame is
    decoded, checked against its checksum, even one without content)."""
    zstandard = load_zstandard()
    state = _thread_state()
    if (decompressor := getattr(state, "zstd", None)) is None:  # one per thread, its buffers reused
        decompressor = state.zstd = zstandard.ZstdDecompressor()
    reader = decompressor.stream_reader(data, read_across_frames=True)
    n = _fill(reader, out)
    if n != len(out) or reader.read(1):
        raise zstandard.ZstdError("zstd frames whose content is not the size their headers give")
    return n
