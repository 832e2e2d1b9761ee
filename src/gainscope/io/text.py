"""Opening input files: compression, encoding, byte order marks and Unicode forms of ids.

Rules implemented here, shared by every file reader:

* **Compression.** A file whose first bytes are the gzip magic number (``1f 8b``) or zstd's (``28 b5 2f fd``)
  is decompressed transparently, in blocks, whatever its name (:mod:`gainscope.io.compressed`).
* **Encoding.** Files are UTF-8 unless ``encoding=`` says otherwise. A UTF-8 byte order mark at the very
  start of the file is dropped (``utf-8-sig`` behaviour): it never becomes part of the first query id.
  Bytes that are not valid in the encoding stop the reading with a :class:`~gainscope.errors.FormatError`
  that names the file, the line and the byte offset, and suggests ``encoding=``. Any other encoding is
  decoded once and handed on as UTF-8 text, so the rest of the package only ever sees UTF-8 bytes.
* **Lines.** Lines end at ``\\n``; a ``\\r`` before it is whitespace like any other (the TREC readers refuse
  one followed by more data). Line numbers are 1-based and count every physical line, comments and blank
  lines included. A line is read at most :data:`MAX_LINE_BYTES` (1 MiB; a JSON Lines record
  :data:`MAX_RECORD_BYTES`, 64 MiB) at a time: a longer one is a FormatError naming it, so a file without
  line ends is never gathered whole.
* **Files.** Only regular files are opened (symbolic links followed): a missing path, a directory, a device
  such as ``/dev/zero`` or a FIFO is a :class:`~gainscope.errors.FileAccessError`, raised before anything is
  opened. ``"-"`` is standard input, read once and never held whole in memory: redirected from a regular file
  (``< run.txt``), that file is read where it is; otherwise (a pipe) its first 64 KiB are read, and a longer input
  is copied to a temporary file (in ``TMPDIR``, deleted with its TextFile) as it is read, its plain content handed to
  the scanner as it arrives (:meth:`TextFile.into_buffers`). A binary file object is read once, whole. A file
  whose size changes while it is read is a FileAccessError too. Damaged compressed data (truncated, corrupt, a bad
  checksum) is a FormatError naming the file.
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
import contextlib
import gzip
import io
import os
import stat
import sys
import unicodedata
import weakref
import zlib
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from gainscope.deferred import deferred_module
from gainscope.errors import FileAccessError, FormatError, InputError, PolicyError, UnknownFormatError, option
from gainscope.io.compressed import (
    MAGIC_BYTES,
    BlockStream,
    Buffers,
    compression_of,
    decompressed,
    decompressed_into,
    is_zstd_error,
)

if TYPE_CHECKING:
    from concurrent.futures import Executor

    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = [
    "BOM",
    "MAX_LINE_BYTES",
    "MAX_RECORD_BYTES",
    "NORMAL_FORMS",
    "STDIN",
    "TextFile",
    "canonical_encoding",
    "changed_ids",
    "decode_utf8",
    "id_form_warnings",
    "is_comment",
    "is_stream",
    "long_line_message",
    "normalize_id_columns",
    "not_nfc_warning",
    "regular_file_size",
]

BOM = b"\xef\xbb\xbf"
NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
HEAD_BYTES = 1 << 16
MAX_LINE_BYTES = 1 << 20  # the longest line a line-based reader takes (TREC lines are about 100 bytes)
MAX_RECORD_BYTES = 1 << 26  # the longest line of JSON Lines (one record, which may carry texts)
STDIN = "-"
SPOOL_BYTES = HEAD_BYTES  # standard input longer than this is kept in a temporary file, not in memory


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
        f"name it, for example {option('encoding', 'latin-1')} or {option('encoding', 'cp1252')}",
        path=name, line=line, text=None)


def decode_utf8(data: bytes, name: str) -> str:
    """Decode a whole UTF-8 buffer (a BOM already removed), or raise a FormatError with line and offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(name, data, exc, encoding="UTF-8") from None


class TextFile:
    """One input: display name, compression (``compression``: None, ``"gzip"`` or ``"zstd"``) and encoding, read
    as UTF-8 bytes.

    ``source`` is a path, ``"-"`` for standard input (see the module docstring), or a binary file object (read once,
    whole). ``name`` is
    the path as the caller gave it (``<stdin>`` for standard input), used in every message.
    ``read_bytes()`` returns the whole content decompressed and converted to UTF-8 (BOM kept, so offsets stay
    true); ``lines()`` streams physical lines with their numbers and byte offsets, the BOM removed from line 1.

    Only regular files are read: a missing path, a directory, a device (``/dev/zero``) or a FIFO is a
    :class:`~gainscope.errors.FileAccessError` before anything is opened, so nothing blocks or reads forever.
    """

    def __init__(self, source: str | os.PathLike[str] | BinaryIO, encoding: str = "utf-8") -> None:
        self.encoding = canonical_encoding(encoding)
        self._data: bytes | None = None
        self._raw_size = 0
        self.on_disk = False
        self.file: str | None = None  # where the stored content is read: the path, or standard input's file
        self._pipe: _Tee | None = None  # standard input still being read from its pipe (plain UTF-8 content)
        if isinstance(source, str) and source == STDIN:
            stdin = _stdin()
            if stdin is None:
                raise FileAccessError("- means standard input, and there is none here", path=STDIN)
            source = stdin
        if not isinstance(source, (str, os.PathLike)):
            self.path = self.name = _stream_name(source)
            self._stream(source)
            return
        self.on_disk = True
        self.path = self.file = os.fspath(source)
        self.name = str(source)
        self._raw_size = regular_file_size(self.path, self.name)
        self._detect_compression()

    def _detect_compression(self) -> None:
        try:
            with open(self._stored(), "rb") as fh:
                self.compression = compression_of(fh.read(MAGIC_BYTES))
        except OSError as exc:
            raise _access_error(self.name, exc) from None

    def _stream(self, stream: BinaryIO) -> None:
        """Read a file object. Standard input is kept out of memory when it is large: a redirected regular file is
        read where it is (:func:`_redirected_file`); other content (a pipe) is copied to a temporary file as it
        is read (:class:`_Tee`), and plain UTF-8 content is streamed to the scanner while it arrives."""
        stdin = stream is _stdin()
        if stdin and stream in _CONSUMED:
            raise FileAccessError("standard input was already read for another input; only one input can be read "
                                  "from it (given as -)", path=self.name)
        if stdin and (file := _redirected_file(stream)) is not None:
            _CONSUMED.add(stream)
            self.on_disk, self.file, self._raw_size = True, file[0], file[1]
            self._detect_compression()
            return
        try:
            raw = stream.read(SPOOL_BYTES + 1) if stdin else stream.read()
        except OSError as exc:
            raise _access_error(self.name, exc) from None
        if stdin:
            _CONSUMED.add(stream)
        if not isinstance(raw, bytes):
            raise InputError(f"{self.name}: give a binary file object (for example sys.stdin.buffer), not a text "
                             f"one")
        self.compression = compression_of(raw[:MAGIC_BYTES])
        if stdin and len(raw) > SPOOL_BYTES:  # more than a small input: kept in a temporary file, not in memory
            whole = bool(self.compression) or self.encoding != "utf-8"  # read whole, as a file of this kind is
            # a copy read back at once goes through the page cache; one kept for the readers only, around it
            self._pipe = _Tee(stream, raw, self, direct=not whole)
            self._raw_size = len(raw)
            if whole:
                self._drain()
            return
        self._raw_size = len(raw)
        if self.compression:
            with self._decompressing():
                raw = b"".join(decompressed(io.BytesIO(raw), self.compression))
        self._data = self._transcode(raw) if self.encoding != "utf-8" else raw

    def _drain(self) -> None:
        """Standard input read to its end into its temporary file, which is then read as the file itself."""
        if self._pipe is not None:
            self._raw_size = self._pipe.drain()
            self.on_disk, self.file, self._pipe = True, self._pipe.path, None

    def _stored(self) -> str:
        """The path of the stored content (standard input read to its end first)."""
        self._drain()
        if self.file is None:
            raise RuntimeError("the content is in memory")
        return self.file

    @property
    def piped(self) -> bool:
        """True while (plain UTF-8) standard input is still being read from its pipe: :meth:`into_buffers` streams
        it to the scanner, copying it to a temporary file the readers read if need be; every other reading first
        reads it to its end."""
        return self._pipe is not None

    @property
    def stored(self) -> str | None:
        """The path of a file holding the stored content (a file's own path; for standard input, its redirected
        file or its temporary copy, read to the end first), or None when the content is held in memory."""
        self._drain()
        return self.file

    # ------------------------------------------------------------------ properties
    @property
    def size(self) -> int:
        """Size in bytes as stored (the compressed size of a compressed file)."""
        self._drain()
        return self._raw_size

    @property
    def direct(self) -> bool:
        """True when polars can read the file from its path (a plain UTF-8 file on disk, not compressed)."""
        self._drain()
        return self.on_disk and not self.compression and self.encoding == "utf-8"

    @property
    def stem(self) -> str:
        """The file name without directory, a compression extension (``.gz``, ``.zst``) and one more extension
        (a default run name)."""
        name = _without_compression_suffix(Path(self.path).name)
        return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name

    @property
    def suffix(self) -> str:
        """The lower-case extension that says the format (``.gz``, ``.zst`` ignored), e.g. ``".jsonl"``."""
        return Path(_without_compression_suffix(Path(self.path).name.lower())).suffix

    # ------------------------------------------------------------------ content
    @contextlib.contextmanager
    def _decompressing(self) -> Iterator[None]:
        """Turn what can go wrong while reading into gainscope errors naming the file: damaged compressed data
        (truncated, corrupt, a bad checksum) is invalid input; an operating-system failure is an I/O error."""
        kind = self.compression or "gzip"
        try:
            yield
        except EOFError:
            end = "its compressed stream" if kind == "gzip" else "its last frame"
            raise FormatError(f"the {kind} data ends before the end of {end}: the file is truncated; copy or "
                              f"download it again", path=self.name) from None
        except (zlib.error, gzip.BadGzipFile) as exc:
            raise FormatError(f"the gzip data is corrupt ({exc}); copy or download the file again",
                              path=self.name) from None
        except FileAccessError:  # already ours (standard input's copy could not be written)
            raise
        except OSError as exc:
            raise _access_error(self.name, exc) from None
        except Exception as exc:
            if not is_zstd_error(exc):
                raise
            raise FormatError(f"the zstd data is corrupt ({exc}); copy or download the file again",
                              path=self.name) from None

    @contextlib.contextmanager
    def _open(self) -> Iterator[BinaryIO]:
        """The file's content as a binary stream (decompressed), with read errors turned into ours."""
        with self._decompressing():
            if self._data is not None:
                yield io.BytesIO(self._data)
                return
            with open(self._stored(), "rb") as fh:
                if self.compression:
                    yield io.BufferedReader(BlockStream(decompressed(fh, self.compression)))
                else:
                    yield fh

    def into_buffers(self, buffers: Buffers, size: int, headroom: int, pool: Executor | None = None,
                     ahead: int = 2) -> Generator[tuple[bytearray, int], None, None]:
        """The stored content decompressed (not transcoded) straight into reusable buffers, in order (see
        :func:`~gainscope.io.compressed.decompressed_into`), with damaged data and read errors raised as
        FormatError and FileAccessError naming the file."""
        with self._decompressing():
            if self._data is not None:
                yield from decompressed_into(io.BytesIO(self._data), None, buffers, size, headroom)
                return
            if self._pipe is not None and self._pipe.fresh:  # standard input as it arrives (copied to a file)
                yield from decompressed_into(self._pipe, None, buffers, size, headroom)  # type: ignore[arg-type]
                self._drain()
                return
            with open(self._stored(), "rb") as fh:
                yield from decompressed_into(fh, self.compression, buffers, size, headroom, pool, ahead)

    def _raw(self) -> bytes:
        with self._open() as fh:
            data = fh.read()
        if not self.compression:
            self._check_unchanged(len(data))
        return data

    def _check_unchanged(self, read: int) -> None:
        """Refuse a plain file whose size changed between opening and the end of reading (it was rewritten)."""
        if self.on_disk and read != self._raw_size:
            raise FileAccessError(
                f"{self.name} changed while it was read ({self._raw_size} bytes when reading began, {read} read); "
                f"read it again once nothing writes to it", path=self.name)

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
        if self._pipe is not None and size <= self._pipe.head_size:
            return self._pipe.head(size)
        with self._open() as fh:
            return fh.read(size)

    def chunks(self, size: int = 1 << 24) -> Iterator[bytes]:
        """The UTF-8 content in pieces of about ``size`` bytes, each ending at a line end (streamed).

        A piece of a line longer than :data:`MAX_LINE_BYTES` left over at the end of a block raises
        :class:`LineTooLong` instead of being gathered (the careful parser then names the line)."""
        if self.encoding != "utf-8":
            self.read_bytes()
        read = 0
        with self._open() as fh:
            carry = b""
            while block := fh.read(size):
                read += len(block)
                block = carry + block
                cut = block.rfind(b"\n") + 1
                carry = block[cut:]
                if len(carry) > MAX_LINE_BYTES:
                    raise LineTooLong
                if cut:
                    yield block[:cut]
            if carry:
                yield carry
        if not self.compression and self.encoding == "utf-8":
            self._check_unchanged(read)

    def has_bom(self) -> bool:
        """True when the file starts with a UTF-8 byte order mark."""
        if self.encoding != "utf-8":
            return False
        return self.head(3) == BOM

    def binary_source(self) -> str | io.BytesIO:
        """The stored bytes for a binary reader (Parquet): the path of a file, or a buffer of standard input."""
        return self._stored() if self.on_disk or self.piped else io.BytesIO(self._data or b"")

    def polars_source(self) -> str | bytes:
        """What to hand to polars: the path itself when possible, else the UTF-8 bytes."""
        return self._stored() if self.direct else self.read_bytes()

    def lines(self, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, int, bytes]]:
        """Yield ``(line_number, byte_offset, raw_line)``; the BOM is removed from line 1.

        ``raw_line`` keeps its line ending. Plain UTF-8 files are streamed, not loaded whole. A line longer
        than ``limit`` bytes is a FormatError naming it (a binary file, or lines not ended by ``\\n``).
        """
        offset = 0
        with self._open() as fh:
            for lineno, start, raw in _number_lines(fh, limit):
                if len(raw) > limit and not raw.endswith(b"\n"):
                    raise _long_line(self.name, lineno, limit, raw)
                offset = start + len(raw)
                yield lineno, start, raw
        if not self.compression and self.encoding == "utf-8":
            self._check_unchanged(offset)

    def decode_line(self, raw: bytes, lineno: int, offset: int) -> str:
        """Decode one raw line as UTF-8, or raise a FormatError naming the line and byte offset."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            enc = "UTF-8" if self.encoding == "utf-8" else "UTF-8 (converted)"
            raise _decode_error(self.name, raw, exc, encoding=enc, base=offset, line=lineno) from None


def _without_compression_suffix(name: str) -> str:
    for suffix in (".gz", ".zst", ".zstd"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_comment(line: bytes) -> bool:
    """The comment rule of every line-based reader: ``line`` (as :meth:`TextFile.lines` yields it, the BOM of
    line 1 removed) is a comment when its first byte is ``#``. A ``#`` anywhere else is data -- ids such as
    ``doc#1`` or ``msmarco_v2.1_doc_00_0#0_1`` are read whole -- and so is an indented ``#`` line."""
    return line[:1] == b"#"


def is_stream(source: object) -> bool:
    """True for standard input (the string ``"-"``) and binary file objects: sources read once, whole."""
    if isinstance(source, str):
        return source == STDIN
    if isinstance(source, (bytes, os.PathLike)):
        return False
    return isinstance(source, io.IOBase) or callable(getattr(source, "read", None))


class LineTooLong(Exception):
    """A line longer than :data:`MAX_LINE_BYTES` met by :meth:`TextFile.chunks` (the careful parser then names
    it)."""


_CONSUMED: weakref.WeakSet[Any] = weakref.WeakSet()  # standard input streams already read


def _stdin() -> BinaryIO | None:
    """The binary standard input (None when there is none, as under some embedders)."""
    return getattr(sys.stdin, "buffer", None)


def _redirected_file(stream: Any) -> tuple[str, int] | None:
    """``(path, size)`` of the regular file standard input is redirected from (``< run.txt``), to be read as the file
    itself (in parallel ranges, from the path ``/proc/self/fd/N``, which opens the file anew); None when it is not one,
    when its reading has begun (the content then starts after the file's start), or where there is no ``/proc``."""
    try:
        fd = stream.fileno()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or os.lseek(fd, 0, os.SEEK_CUR) != 0 or stream.tell() != 0:
            return None
        path = f"/proc/self/fd/{fd}"
        same = os.stat(path)
    except (OSError, ValueError, AttributeError):  # no descriptor (a BytesIO), no /proc
        return None
    return (path, st.st_size) if (same.st_dev, same.st_ino) == (st.st_dev, st.st_ino) else None


class _Tee:
    """Standard input that is not a regular file (a pipe), copied to a temporary file as it is read, so that the
    readers can read it should the scanner refuse it: the scanner reads it as it arrives (:meth:`readinto`; a
    thread writes the copy meanwhile, :class:`_Copier`), the readers read the file once the input is read to its
    end (:meth:`drain`). The file is deleted when its :class:`TextFile` is (or at exit)."""

    def __init__(self, stream: BinaryIO, head: bytes, owner: TextFile, *, direct: bool = True) -> None:
        import tempfile

        self._stream, self._name = stream, owner.name
        try:
            spool = tempfile.NamedTemporaryFile(prefix="gainscope-stdin-")  # closed by finalize
        except OSError as exc:
            raise _spool_error(self._name, exc) from None
        self.path = spool.name
        self._copier = _Copier(spool, self._name, direct=direct)
        weakref.finalize(owner, _Copier.close, self._copier, spool)
        self._head = head  # the first bytes, read before the rest (kept: the format is told from them)
        self.head_size = len(head)
        self._given = 0
        _enlarge_pipe(stream)
        self._copier.put(memoryview(head))

    @property
    def fresh(self) -> bool:
        """True while nothing has been read through :meth:`readinto`."""
        return self._given == 0

    def head(self, size: int) -> bytes:
        return self._head[:size]

    def readinto(self, buffer: Any) -> int:
        """The next bytes of the input: first the head, then new ones (given to the copier)."""
        view = memoryview(buffer).cast("B")
        if self._given < self.head_size:
            n = min(len(view), self.head_size - self._given)
            view[:n] = self._head[self._given:self._given + n]
        else:
            n = self._pull(view)
            self._copier.put(view[:n])
        self._given += n
        return n

    def drain(self) -> int:
        """Read the input to its end into the file (every block written); its size."""
        buffer = memoryview(bytearray(1 << 22))
        while n := self._pull(buffer):
            self._copier.put(buffer[:n])
        self._copier.finish()
        return self._copier.size

    def _pull(self, view: memoryview) -> int:
        try:
            readinto = getattr(self._stream, "readinto", None)
            if readinto is not None:
                return int(readinto(view) or 0)
            data = self._stream.read(len(view))
        except OSError as exc:
            raise _access_error(self._name, exc) from None
        view[:len(data)] = data
        return len(data)


class _Copier:
    """Bytes written one after another to a temporary file by a thread, in blocks of :attr:`BLOCK` bytes gathered in
    page-aligned buffers (:attr:`AHEAD` of them waiting at most; then :meth:`put` waits for the disk). Where the file
    system takes it and ``direct`` is set (a copy kept for the readers only, should the scanner refuse the input), the
    blocks are written with ``O_DIRECT``: the copy then costs little CPU and no page cache (the last block is padded
    to the alignment, and the file cut back to its size). A copy read back at once (compressed content, another
    encoding) goes through the page cache, from which it is then read without touching the disk."""

    BLOCK = 4 << 20
    AHEAD = 4
    ALIGN = 4096

    def __init__(self, spool: Any, name: str, *, direct: bool = True) -> None:
        import mmap
        import queue
        import threading

        self.fd, self.name = spool.fileno(), name
        self.size = 0  # bytes given
        self.failed: list[OSError] = []
        self._direct: int | None = None
        if direct:
            with contextlib.suppress(OSError, AttributeError):  # no O_DIRECT here, or not on this file system
                self._direct = os.open(spool.name, os.O_WRONLY | os.O_DIRECT)
        self._free: queue.SimpleQueue[mmap.mmap] = queue.SimpleQueue()
        for _ in range(self.AHEAD + 1):
            self._free.put(mmap.mmap(-1, self.BLOCK))
        self._stage: mmap.mmap | None = None
        self._filled = 0
        self._blocks: queue.Queue[tuple[int, mmap.mmap, int] | None] = queue.Queue()
        self._thread: threading.Thread | None = threading.Thread(target=self._run, name="gainscope-stdin-copy",
                                                                 daemon=True)
        self._thread.start()

    def put(self, view: memoryview) -> None:
        """Copy ``view`` to be written after what was given before; raise the writing's error if there was one."""
        if self.failed:
            raise _spool_error(self.name, self.failed[0])
        while view:
            if self._stage is None:
                self._stage = self._free.get()  # waits for the writer to be done with one
            n = min(len(view), self.BLOCK - self._filled)
            self._stage[self._filled:self._filled + n] = view[:n]
            self._filled += n
            self.size += n
            view = view[n:]
            if self._filled == self.BLOCK:
                self._send()

    def _send(self) -> None:
        if self._stage is not None and self._filled:
            self._blocks.put((self.size - self._filled, self._stage, self._filled))
            self._stage, self._filled = None, 0

    def finish(self) -> None:
        """Wait until everything given is written; raise the writing's error if there was one."""
        if self._thread is not None:
            self._send()
            self._blocks.put(None)
            self._thread.join()
            self._thread = None
            if self._direct is not None:
                os.close(self._direct)
                self._direct = None
            if not self.failed:
                try:
                    os.ftruncate(self.fd, self.size)  # the padding of the last block cut off
                except OSError as exc:
                    self.failed.append(exc)
        if self.failed:
            raise _spool_error(self.name, self.failed[0])

    def _run(self) -> None:
        while (item := self._blocks.get()) is not None:
            offset, block, n = item
            if not self.failed:  # after an error, the blocks are dropped
                try:
                    self._write(offset, block, n)
                except OSError as exc:
                    self.failed.append(exc)
            self._free.put(block)

    def _write(self, offset: int, block: Any, n: int) -> None:
        view = memoryview(block)[:n]
        if self._direct is not None:
            done = 0
            try:  # whole pages (BLOCK is a multiple of ALIGN): the padding of the last block is cut off at the end
                done = os.pwrite(self._direct, memoryview(block)[:-(-n // self.ALIGN) * self.ALIGN], offset)
            except OSError as exc:
                import errno

                if exc.errno != errno.EINVAL:
                    raise
                os.close(self._direct)  # not taken after all: written through the page cache from now on
                self._direct = None
            if done >= n:
                return
            offset, view = offset + done, view[done:]
        while view:
            done = os.pwrite(self.fd, view, offset)
            offset, view = offset + done, view[done:]

    @staticmethod
    def close(copier: _Copier, spool: Any) -> None:
        """The end of a TextFile: its copier stopped (before its file is closed), then its file closed (deleted)."""
        with contextlib.suppress(FileAccessError):
            copier.finish()
        spool.close()


def _spool_error(name: str, exc: OSError) -> FileAccessError:
    import tempfile

    return FileAccessError(f"cannot keep standard input in a temporary file in {tempfile.gettempdir()}: "
                           f"{exc.strerror or exc}; set TMPDIR to a directory with room for it", path=name)


_PIPE_BYTES = 1 << 20


def _enlarge_pipe(stream: Any) -> None:
    """Ask for a pipe buffer of 1 MiB (Linux; the default is 64 KiB): fewer, larger reads, and the writer waits less."""
    try:
        import fcntl

        fd = stream.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (OSError, ValueError, AttributeError, ImportError):  # not a pipe, no such option, over the user's limit
        pass


def _stream_name(stream: Any) -> str:
    """``<stdin>`` for standard input and streams without a name, else the stream's name."""
    name = getattr(stream, "name", None)
    return name if isinstance(name, str) and name and stream is not _stdin() else "<stdin>"


def _access_error(name: str, exc: OSError) -> FileAccessError:
    if isinstance(exc, FileNotFoundError):
        return FileAccessError(f"no such file: {name!r}", path=name)
    return FileAccessError(f"cannot read {name}: {exc.strerror or exc}", path=name)


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def regular_file_size(path: str, name: str) -> int:
    """The size of the regular file at ``path`` (symbolic links followed); anything else is refused without
    opening it (a FIFO without a writer would block, a device such as /dev/zero never ends)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _access_error(name, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileAccessError(f"{name} is a directory; give the path of a file (for a BEIR folder, its "
                              f"qrels/<split>.tsv)", path=name)
    if not stat.S_ISREG(st.st_mode):
        kind = next((label for test, label in _KINDS if test(st.st_mode)), "not a regular file")
        raise FileAccessError(f"{name} is {kind}, not a regular file; give the path of a file, or read standard "
                              f"input as -", path=name)
    return st.st_size


def _long_line(name: str, lineno: int, limit: int, raw: bytes) -> FormatError:
    return FormatError(long_line_message(limit, raw), path=name, line=lineno)


def long_line_message(limit: int, raw: bytes) -> str:
    """Why a line longer than ``limit`` bytes (``raw``: its first bytes at least) is refused, and the likely fix."""
    hint = ("; it holds carriage returns (\\r) but no line feed: if its lines end with \\r alone (old Mac line "
            "ends), convert them to \\n" if b"\r" in raw else "; is this a text file with one record per line?")
    return f"the line is longer than {limit:,} bytes, the limit of a line{hint}"


def _number_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, int, bytes]]:
    """Number binary lines (split at ``\\n`` only, never at a lone ``\\r``), each read up to ``limit + 1``
    bytes so that a file without line ends is never gathered whole."""
    offset = 0
    lineno = 0
    while raw := stream.readline(limit + 1):
        lineno += 1
        start = offset
        offset += len(raw)
        if lineno == 1 and raw.startswith(BOM):
            raw = raw[3:]
            start += 3
        yield lineno, start, raw
        if len(raw) > limit and not raw.endswith(b"\n"):
            return


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
    """The warning about ids that are not NFC: ``count`` distinct ids of ``column`` (``query_id`` or ``doc_id``),
    the first of them ``example``; ``where`` starts it (``"run.txt: "``)."""
    label = "query" if column == "query_id" else "doc"
    return (f"{where}{count} distinct {label} id(s) are not in Unicode NFC form, e.g. {example!r} (code points "
            f"{_code_points(example)}); ids that look the same may not match; read with "
            f"{option('normalize_ids', 'NFC')} to normalise them")


def id_form_warnings(candidates: Mapping[str, Iterable[str]], form: str | None, where: str = "") -> list[str] | None:
    """What :func:`normalize_id_columns` says, under ``normalize_ids`` None or ``"NFC"`` (``form``), about a table
    whose only ids that may not be NFC are ``candidates`` (``{"query_id": ids, "doc_id": ids}``, each in the
    table's order, repeats allowed): the C scanner lists the ids holding a code point outside the ranges every
    string of which is NFC. Checked with :func:`unicodedata.is_normalized`. Returns the warnings (``form`` None;
    none when every id is NFC), or None when ``form`` is ``"NFC"`` and changes an id (the readers then normalise
    the ids and note it)."""
    if form not in (None, "NFC"):
        raise ValueError(f"only ids outside NFC are listed: form must be None or 'NFC', not {form!r}")
    for column in ("query_id", "doc_id"):
        changed = [i for i in dict.fromkeys(candidates.get(column, ())) if not unicodedata.is_normalized("NFC", i)]
        if changed and form is not None:
            return None
        if changed:
            return [not_nfc_warning(where, column, len(changed), changed[0])]
    return []


def _code_points(text: str, limit: int = 12) -> str:
    shown = " ".join(f"U+{ord(ch):04X}" for ch in text[:limit])
    return shown + (" ..." if len(text) > limit else "")
