"""Request-path normalisation that answers exactly as Tomcat's connector does.

Tomcat drops path parameters, decodes %XX once, rejects encoded slashes and NUL, collapses '//' and '/./', resolves '..'
and answers 400 when the path climbs above the root, all before any webapp sees the request.
Tornado routes on the raw path and would otherwise let StaticFileHandler decode a second time.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote_to_bytes


class InvalidPath(ValueError):
    """Tomcat answers 400 for this path."""


_ENCODED_SEPARATOR = re.compile(r"%(2f|5c|00)", re.IGNORECASE)
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")


def normalize(raw_path: str) -> str:
    """Returns the decoded, normalised path, or raises InvalidPath."""
    if not raw_path.startswith("/"):
        raise InvalidPath("path must start with /")
    if _ENCODED_SEPARATOR.search(raw_path) or _BAD_ESCAPE.search(raw_path) or "\\" in raw_path:
        raise InvalidPath("encoded separator, NUL, bad escape or backslash")
    # Path parameters (";jsessionid=...") are cut from each raw segment before decoding, as Tomcat does.
    raw_path = "/".join(segment.split(";", 1)[0] for segment in raw_path.split("/"))
    try:
        decoded = unquote_to_bytes(raw_path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidPath("path is not UTF-8") from e
    if "\x00" in decoded:
        raise InvalidPath("NUL in path")
    segments: list[str] = []
    for segment in decoded.split("/")[1:]:
        if segment in ("", "."):
            continue
        if segment == "..":
            if not segments:
                raise InvalidPath("path climbs above the root")
            segments.pop()
            continue
        segments.append(segment)
    trailing = "/" if decoded.endswith(("/", "/.", "/..")) and segments else ""
    return "/" + "/".join(segments) + trailing


def reencode(path: str) -> str:
    """Quotes a normalised path again, so that Tornado's routing decodes it back to itself, not further."""
    return quote(path, safe="/")
