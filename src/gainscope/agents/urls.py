"""URL normalisation for de-duplication: w3lib's canonical form plus the web's usual equivalences.

:func:`normalise_url` applies, in order:

1. a missing scheme (``example.com/a``) is taken as ``http://``;
2. ``w3lib.url.canonicalize_url`` (Scrapy's maintained implementation of RFC 3986 section 6 normalisation):
   scheme and host lower-cased, the host IDNA-encoded, percent-encoding normalised, dot segments
   resolved, query parameters sorted, the fragment dropped;
3. tracking parameters are removed: ``utm_*`` and the click ids and campaign tags listed in
   :data:`TRACKING_PARAMETERS` (``gclid``, ``fbclid``, ``msclkid``, ``mc_eid`` ...); an empty query goes;
4. the default port (80 for http, 443 for https) is removed; an IPv6 host keeps its brackets
   (``https://[::1]:8080/a``);
5. the trailing dot of a fully qualified host is removed (``example.com.`` is ``example.com``), and a leading
   ``www.`` of the host is removed (``keep_www=True`` keeps it);
6. ``http`` and ``https`` are made one (written ``https``; ``keep_scheme=True`` keeps them apart);
7. a trailing slash is removed from a non-empty path (``/a/`` -> ``/a``); the root stays ``/``.

A value that is not an http(s) URL after step 1 (``doi:10.1000/x``, ``urn:...``) is only stripped and
lower-cased in its scheme, never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

__all__ = ["DEFAULT_URL_POLICY", "TRACKING_PARAMETERS", "UrlPolicy", "normalise_url"]

#: query parameters dropped besides every ``utm_*`` one
TRACKING_PARAMETERS = frozenset({
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "li_fat_id",
    "mc_cid", "mc_eid", "igshid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id",
    "rb_clickid", "s_cid", "srsltid",
})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


@dataclass(frozen=True)
class UrlPolicy:
    """Which web equivalences :func:`normalise_url` applies (all by default)."""

    keep_www: bool = False
    keep_scheme: bool = False
    drop_tracking: bool = True
    strip_trailing_slash: bool = True


#: every equivalence applied
DEFAULT_URL_POLICY = UrlPolicy()


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMETERS


def normalise_url(url: str, policy: UrlPolicy = DEFAULT_URL_POLICY) -> str:
    """The normalised form of ``url`` (see the module docstring); equal forms are the same page."""
    text = url.strip()
    if not text:
        return ""
    if text.startswith("//"):
        text = "http:" + text
    elif not _SCHEME.match(text) or re.match(r"^[^/:]+:\d+(/|$)", text):  # "host:8080/x" has no scheme either
        text = "http://" + text
    scheme = text.split(":", 1)[0].lower()
    if scheme not in _DEFAULT_PORTS:
        return scheme + text[len(scheme):]
    try:
        canonical = canonicalize_url(text)
        parts = urlsplit(canonical)
        port = parts.port
    except ValueError:
        return text
    host = parts.hostname or ""  # lower-cased, without the brackets of an IPv6 address
    if ":" in host:
        host = f"[{host}]"
    else:
        host = host.rstrip(".")
        if not policy.keep_www and host.startswith("www."):
            host = host[4:]
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    if not policy.keep_scheme:
        scheme = "https"
    query = parts.query
    if policy.drop_tracking and query:
        query = "&".join(p for p in query.split("&") if p and not _is_tracking(unquote_plus(p.split("=", 1)[0])))
    path = parts.path or "/"
    if policy.strip_trailing_slash and len(path) > 1:
        path = path.rstrip("/") or "/"
    userinfo = ""
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "") + "@"
    return urlunsplit((scheme, userinfo + host, path, query, ""))
