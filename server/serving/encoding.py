"""Content encoding (gzip) of every answer: who gets it, what is worth it, its ETag, and the
Tornado output transform that applies it (prebuilt bytes when the answer has them)."""

# gzip only: every HTTP client and proxy speaks it. Brotli saves a further ~15 % on JSON but needs a
# native package and a third copy of each cached answer; the answers that matter are replayed from
# prebuilt bytes, so the CPU of the encoder is not what costs.

from __future__ import annotations

import collections
import gzip
import hashlib
import re
import zlib

from tornado import httputil
from tornado.web import OutputTransform

# Below this an answer fits one TCP segment with its head either way: gzip would save no round
# trip, only add its 18-byte frame and a compressor's CPU (Tornado's GZipContentEncoding agrees).
MIN_LENGTH = 1024
LEVEL = 6  # zlib's default: level 9 costs twice the CPU for ~1 % less on JSON

COMPRESSIBLE = frozenset(
    {
        "application/json",
        "application/javascript",
        "application/xml",
        "application/schema+json",
        "application/manifest+json",
        "image/svg+xml",
    }
)
# Server-Sent Events stay plain: each event must reach the client when it is written, so a stream
# would need a flush of the compressor per (small) event, saving little, and a compressor's ~256 KB
# held per open connection.
NEVER = frozenset({"text/event-stream"})


def compressible(content_type: str) -> bool:
    """Whether a body of this media type is worth compressing (PNG and other images are already)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in NEVER:
        return False
    return media.startswith("text/") or media in COMPRESSIBLE


_CODING = re.compile(r"\s*([^\s;,]+)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*")


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether Accept-Encoding allows gzip (RFC 9110 12.5.3: `gzip`, `x-gzip` or `*`, not at q=0)."""
    if not accept_encoding:
        return False
    if "q" not in accept_encoding and "gzip" in accept_encoding:
        return True  # the usual `gzip, deflate, br`: no weights to read
    gzip_q = star_q = None
    for part in accept_encoding.lower().split(","):
        match = _CODING.fullmatch(part)
        if match is None:
            continue
        coding, weight = match.group(1), match.group(2)
        try:
            q = float(weight) if weight is not None else 1.0
        except ValueError:
            continue
        if coding in ("gzip", "x-gzip"):
            gzip_q = q if gzip_q is None else max(gzip_q, q)
        elif coding == "*":
            star_q = q
    if gzip_q is not None:
        return gzip_q > 0
    return star_q is not None and star_q > 0


def gzip_etag(etag: str) -> str:
    """The ETag of the gzip representation of the answer whose plain ETag is `etag`: a strong
    validator names one sequence of bytes, so the two representations must not share it. Hex like
    every ETag of the API (its documented form), derived from the plain one (so either is checked
    against the answer without keeping both)."""
    weak, plain = ("W/", etag[2:]) if etag.startswith("W/") else ("", etag)
    return weak + '"' + hashlib.blake2b(plain.encode(), digest_size=12, person=b"statsapi-gzip").hexdigest() + '"'


def compress(body: bytes) -> bytes:
    # mtime=0: the same body gives the same bytes (in every process, so a proxy's copy stays valid).
    return gzip.compress(body, LEVEL, mtime=0)


def prebuilt_gzip(content_type: str, body: bytes) -> bytes | None:
    """The gzip bytes to keep beside `body`, or None when it is served plain to everyone."""
    if len(body) < MIN_LENGTH or not compressible(content_type):
        return None
    return compress(body)


class GzipMemo:
    """The gzip bytes of bodies that repeat (the site's files and page), by a key naming the body
    (its ETag), bounded: compressed once, not per request."""

    def __init__(self, max_entries: int = 512) -> None:
        self.max_entries = max_entries
        self._entries: collections.OrderedDict[str, tuple[bytes, bytes]] = collections.OrderedDict()

    def get(self, key: str, body: bytes) -> bytes:
        entry = self._entries.get(key)
        if entry is not None and entry[0] == body:
            self._entries.move_to_end(key)
            return entry[1]
        gz = compress(body)
        self._entries[key] = (body, gz)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return gz


SITE_GZIP = GzipMemo()


class ContentEncoding(OutputTransform):
    """gzip for every handler's answer to a client that accepts it (the Application's transform;
    replayed answers are encoded by server.compose.app.OneShotDelegate from the same prebuilt bytes).

    A handler that has the gzip bytes of its body already sets `request.statsapi_gzip` to
    (plain, gzip): they are sent as they are. A 200 of a compressible type and at least MIN_LENGTH
    bytes (or streamed) carries `Vary: Accept-Encoding` for every client; the gzip one gets
    `Content-Encoding: gzip` and the ETag of that representation (gzip_etag).
    """

    def __init__(self, request: httputil.HTTPServerRequest) -> None:
        self.request = request
        self._gzipping = False
        self._compressor: zlib._Compress | None = None

    def transform_first_chunk(
        self, status_code: int, headers: httputil.HTTPHeaders, chunk: bytes, finishing: bool
    ) -> tuple[int, httputil.HTTPHeaders, bytes]:
        request = self.request
        if status_code == 304:
            # The client's validator may be either representation's: answer with the one it holds.
            # Vary as the 200 would (RFC 9110 15.4.5); what was dropped with the body is unknown, so
            # always: at worst a cache keys a never-compressed answer by Accept-Encoding too.
            etag = headers.get("Etag")
            if etag is not None and gzip_etag(etag).removeprefix("W/") in request.headers.get("If-None-Match", ""):
                headers["Etag"] = gzip_etag(etag)
            add_vary(headers)
            return status_code, headers, chunk
        if (
            status_code != 200
            or "Content-Encoding" in headers
            or "Content-Range" in headers
            or not compressible(headers.get("Content-Type", ""))
            or (finishing and len(chunk) < MIN_LENGTH and request.method != "HEAD")
        ):
            return status_code, headers, chunk
        add_vary(headers)
        if not accepts_gzip(request.headers.get("Accept-Encoding")):
            return status_code, headers, chunk
        if request.method == "HEAD" and finishing and not chunk:
            return status_code, headers, chunk  # no body to measure: the plain head stands
        self._gzipping = True
        headers["Content-Encoding"] = "gzip"
        etag = headers.get("Etag")
        if etag is not None:
            headers["Etag"] = gzip_etag(etag)
        prebuilt = getattr(request, "statsapi_gzip", None)
        if finishing and prebuilt is not None and prebuilt[0] == chunk:
            chunk = prebuilt[1]
        elif finishing:
            chunk = compress(chunk)
        else:
            self._compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            chunk = self.transform_chunk(chunk, finishing)
        if "Content-Length" in headers:
            if finishing:
                headers["Content-Length"] = str(len(chunk))
            else:
                del headers["Content-Length"]
        return status_code, headers, chunk

    def transform_chunk(self, chunk: bytes, finishing: bool) -> bytes:
        compressor = self._compressor
        if compressor is None:
            return chunk
        return compressor.compress(chunk) + compressor.flush(zlib.Z_FINISH if finishing else zlib.Z_SYNC_FLUSH)


def add_vary(headers: httputil.HTTPHeaders) -> None:
    vary = headers.get("Vary")
    if vary is None:
        headers["Vary"] = "Accept-Encoding"
    elif "accept-encoding" not in vary.lower():
        headers["Vary"] = vary + ", Accept-Encoding"
