"""Cards: an answer's figures as an SVG or PNG image (`?format=svg|png`), rendered once per answer.

A card is another representation of the same answer, like its CSV: its ETag is derived from the
answer's (so a card is revalidated, and rebuilt, exactly when the answer changes), and the rendered
bytes are kept by that ETag (`CardMemo`), so the answer cache's replays and a busy session alike
render a card once per change of its answer. PNGs are drawn in one worker thread per process: Pillow
releases the interpreter while it rasterises and compresses, so the loop goes on answering meanwhile
(docs/benchmarks.md, "Cards"), and one thread bounds the CPU a burst of new cards can take.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import hashlib
from collections.abc import Mapping
from typing import Any

from server.serving.cards.layout import CONTENTS, Drawing, drawing
from server.serving.cards.png import PNG_MEDIA_TYPE, render_png
from server.serving.cards.svg import SVG_MEDIA_TYPE, render_svg

MEDIA_TYPES = {"svg": SVG_MEDIA_TYPE, "png": PNG_MEDIA_TYPE}
# Bump when a card's look changes: its ETag changes with it, so caches fetch the new drawing.
CARD_VERSION = "1"
# An SVG opened on its own is a document of our origin: it may show pictures, never run anything.
SVG_SECURITY_POLICY = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'"
MEMO_BYTES = 16 << 20

__all__ = ["CONTENTS", "MEDIA_TYPES", "CardMemo", "card_etag", "drawing", "file_name", "render_bytes"]


def card_etag(data_etag: str, kind: str, fmt: str, size: str, theme: str) -> str:
    """The card's ETag: the answer's, the card's options and CARD_VERSION (no rendering needed)."""
    key = "|".join((data_etag, kind, fmt, size, theme, CARD_VERSION)).encode()
    return '"' + hashlib.blake2b(key, digest_size=12).hexdigest() + '"'


def file_name(kind: str, data: Mapping[str, Any], fmt: str) -> str:
    """The name a saved card gets: player-eu-500000001.png."""
    ident = next((data.get(k) for k in ("account_id", "clan_id", "tank_id") if data.get(k) is not None), "")
    return f"{kind}-{data.get('region', '')}-{ident}.{fmt}"


def render_bytes(card: Drawing, fmt: str) -> bytes:
    return render_svg(card) if fmt == "svg" else render_png(card)


class CardMemo:
    """Rendered cards by ETag (least recently used out past MEMO_BYTES), and the renders in flight,
    so that requests for a card being drawn wait for that one drawing."""

    def __init__(self, max_bytes: int = MEMO_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.renders = 0
        self._cards: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._drawing: dict[str, asyncio.Future[bytes]] = {}
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def get(self, etag: str) -> bytes | None:
        body = self._cards.get(etag)
        if body is not None:
            self._cards.move_to_end(etag)
        return body

    def _keep(self, etag: str, body: bytes) -> None:
        if len(body) > self.max_bytes // 8:
            return
        self._cards[etag] = body
        self.bytes += len(body)
        while self.bytes > self.max_bytes:
            _, dropped = self._cards.popitem(last=False)
            self.bytes -= len(dropped)

    async def card(self, etag: str, kind: str, data: Mapping[str, Any], fmt: str, size: str, theme: str) -> bytes:
        """The card's bytes: kept, being drawn, or drawn now (a PNG in the worker thread)."""
        body = self.get(etag)
        if body is not None:
            return body
        pending = self._drawing.get(etag)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._drawing[etag] = future
        try:
            card = drawing(kind, data, size, theme)
            if fmt == "png":
                if self._pool is None:
                    self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="cards")
                body = await asyncio.get_running_loop().run_in_executor(self._pool, render_png, card)
            else:
                body = render_svg(card)
            self.renders += 1
            self._keep(etag, body)
            future.set_result(body)
            return body
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failure nobody else waited for is not logged twice
            raise
        finally:
            del self._drawing[etag]
