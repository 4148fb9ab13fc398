"""The daily bulk files: their listing (GET /dumps) and each file (immutable, ETag, one byte range)."""

from __future__ import annotations

import dataclasses
import hashlib
import re

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import DUMP_FILE, DUMPS
from server.contract.errors import APIError

# A file's name carries its day and its bytes never change (server/services/dumps.py).
IMMUTABLE = "public, max-age=31536000, immutable"
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The one range of a Range header as (first, last) byte, inclusive; None to send the whole
    file (no header, several ranges, another unit, a malformed one: RFC 9110 lets a server ignore
    it); APIError range_not_satisfiable when it starts at or past the end."""
    found = _RANGE.match((header or "").strip())
    if found is None or not (found.group(1) or found.group(2)):
        return None
    first_text, last_text = found.groups()
    if not first_text:  # the last n bytes
        n = int(last_text)
        if n == 0:
            raise APIError("range_not_satisfiable", headers={"Content-Range": f"bytes */{size}"})
        return max(0, size - n), size - 1
    first = int(first_text)
    last = min(int(last_text), size - 1) if last_text else size - 1
    if last_text and int(last_text) < first:
        return None  # an invalid range is ignored
    if first >= size:
        raise APIError("range_not_satisfiable", headers={"Content-Range": f"bytes */{size}"})
    return first, last


@arguments_of(DUMPS)
@dataclasses.dataclass(frozen=True, slots=True)
class DumpsArgs:
    region: str | None
    day: str | None


@arguments_of(DUMP_FILE)
@dataclasses.dataclass(frozen=True, slots=True)
class DumpFileArgs:
    file: str


class DumpsHandler(BaseHandler):
    endpoint = DUMPS

    async def get(self) -> None:
        args = self.arguments((), DumpsArgs)
        self.respond(await self.services.dumps.listing(args.region, args.day))


class DumpFileHandler(BaseHandler):
    endpoint = DUMP_FILE

    async def get(self, *path: str) -> None:
        args = self.arguments(path, DumpFileArgs)
        body = await self.services.dumps.read(args.file)
        part = byte_range(self.request.headers.get("Range"), len(body))
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        self.set_header("Content-Type", DUMP_FILE.media_type)
        self.set_header("Cache-Control", IMMUTABLE)
        self.set_header("Accept-Ranges", "bytes")
        if part is None:
            self._data_etag = etag  # Tornado's finish answers 304 to a matching If-None-Match
            self.finish(body)
            return
        first, last = part
        self.set_status(206)
        self.set_header("Etag", etag)
        self.set_header("Content-Range", f"bytes {first}-{last}/{len(body)}")
        self.finish(body[first : last + 1])


routes = api_routes(DumpsHandler, DumpFileHandler)
