"""Secrets never appear in a message: keys, tokens and URL passwords are replaced by ``***``.

A :class:`Redactor` is built from the secrets a client holds (an API key, credential-like header values, the user
name and password of a URL) and replaces each of them -- as is, escaped as in a ``str`` or ``bytes`` repr, and
percent-decoded -- by ``***``; it also masks the user info of every URL in the text (``http://***@host/...``).
Secrets shorter than :data:`MIN_REDACTED` characters are left, so as not to garble the message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

import httpx

from gainscope.errors import PolicyError

__all__ = ["CREDENTIAL_HEADER", "MIN_REDACTED", "Redactor", "clean_api_key", "credential_values", "mask_userinfo",
           "printable_ascii"]

_USERINFO = re.compile(r"(?<=://)[^/?#\s]*@")
#: header names whose values are treated as secrets
CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.IGNORECASE)
MIN_REDACTED = 4


def printable_ascii(text: str) -> bool:
    """True when every character is printable ASCII (what an HTTP header value can hold safely)."""
    return all(" " <= character <= "~" for character in text)


def clean_api_key(key: str, source: str, what: str = "the API key") -> str:
    """``key`` without surrounding whitespace; a PolicyError (not showing the key) when it still holds a control or
    non-ASCII character. ``source`` names where the key came from and ``what`` what it is, for the message."""
    key = key.strip()
    if not printable_ascii(key):
        raise PolicyError(f"{what} from {source} contains a control or non-ASCII character (a line break, a "
                          "tab, a typographic quote, ...) that an HTTP header cannot hold; the key is not shown "
                          "here: check how it was copied or quoted")
    return key


def mask_userinfo(text: str) -> str:
    """``text`` with the user name and password of every URL in it replaced: ``http://***@host/...``."""
    return _USERINFO.sub("***@", text)


def credential_values(headers: Mapping[str, str], url: str | None = None) -> list[str]:
    """The secrets among ``headers`` (values of credential-like names, and a ``Bearer``/``Basic`` value without its
    scheme) and the user name and password of ``url``."""
    secrets = [value for name, value in headers.items() if CREDENTIAL_HEADER.search(name)]
    secrets += [value.split(" ", 1)[1] for value in secrets if " " in value]
    if url is not None:
        try:
            userinfo = httpx.URL(url).userinfo.decode("ascii", "replace")
        except httpx.InvalidURL:
            userinfo = ""
        for part in userinfo.split(":", 1):
            secrets += [part, unquote(part)]
    return secrets


def _forms(secret: str) -> set[str]:
    """How a secret may appear in a message: as is, escaped as in a str or bytes repr, percent-decoded."""
    return {secret, repr(secret)[1:-1], repr(secret.encode("utf-8", "backslashreplace"))[2:-1], unquote(secret)}


class Redactor:
    """Replaces secrets (in their plain and escaped forms) and URL user info by ``***`` in a message."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for secret in secrets if len(secret) >= MIN_REDACTED for form in _forms(secret)}
        self._forms = sorted((form for form in forms if len(form) >= MIN_REDACTED), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, "***")
        return mask_userinfo(text)
