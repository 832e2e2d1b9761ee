"""Text fingerprints for de-duplication: normalised text, its hash, and 64-bit SimHash for near-duplicates.

* :func:`normalise_text`: HTML entities decoded, tags removed, Unicode NFKC, case-folded, whitespace
  collapsed, leading and trailing ellipses (``...``, ``…``) that search engines add to snippets removed.
* :func:`text_hash`: the first 16 hex digits of the SHA-256 of the normalised text.
* :func:`simhash`: Charikar's SimHash (STOC 2002) over word 3-gram shingles of the normalised text, each
  shingle hashed to 64 bits with BLAKE2b; bit ``b`` of the fingerprint is 1 when more shingles have bit ``b``
  set than not. Near-duplicate documents have fingerprints a few bits apart: Manku, Jain and Das Sarma (WWW
  2007) use a Hamming distance of at most 3 on a web crawl. :func:`simhash_bands` cuts a fingerprint into
  ``distance + 1`` bands: two fingerprints within ``distance`` bits agree on at least one whole band
  (pigeonhole), so exact lookups of the bands find every candidate.
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata

__all__ = ["MIN_SHINGLE_TOKENS", "hamming", "normalise_text", "simhash", "simhash_bands", "text_hash", "tokens"]

_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"^(?:\.\.\.|…|\s)+|(?:\.\.\.|…|\s)+$")
_WORD = re.compile(r"\w+")
#: texts with fewer tokens than this get no SimHash (too short for a meaningful fingerprint)
MIN_SHINGLE_TOKENS = 8
SHINGLE = 3
BITS = 64


def normalise_text(text: str) -> str:
    """The comparable form of a title, snippet or content (see the module docstring)."""
    t = html.unescape(text)
    t = _TAG.sub(" ", t)
    t = unicodedata.normalize("NFKC", t).casefold()
    t = _SPACE.sub(" ", t)
    return _ELLIPSIS.sub("", t).strip()


def text_hash(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``normalise_text(text)``."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()[:16]


def tokens(text: str) -> list[str]:
    """The word tokens of the normalised text."""
    return _WORD.findall(normalise_text(text))


def simhash(text: str) -> int | None:
    """The 64-bit SimHash of ``text``, or None when it has fewer than :data:`MIN_SHINGLE_TOKENS` tokens."""
    words = tokens(text)
    if len(words) < MIN_SHINGLE_TOKENS:
        return None
    counts = [0] * BITS
    for k in range(len(words) - SHINGLE + 1):
        shingle = " ".join(words[k:k + SHINGLE]).encode("utf-8")
        h = int.from_bytes(hashlib.blake2b(shingle, digest_size=8).digest(), "big")
        for b in range(BITS):
            counts[b] += 1 if h >> b & 1 else -1
    return sum(1 << b for b in range(BITS) if counts[b] > 0)


def hamming(a: int, b: int) -> int:
    """The number of bits in which ``a`` and ``b`` differ."""
    return (a ^ b).bit_count()


def simhash_bands(fingerprint: int, distance: int) -> list[tuple[int, int]]:
    """``(band index, band bits)`` for ``distance + 1`` contiguous bands covering the 64 bits."""
    n = distance + 1
    edges = [round(k * BITS / n) for k in range(n + 1)]
    return [(k, fingerprint >> edges[k] & ((1 << (edges[k + 1] - edges[k])) - 1)) for k in range(n)]
