"""The answer cache: rendered answers (bytes, ETag, fixed headers) by path and normalised query."""

# A hit is written by server.compose.app.OneShotDelegate without building a handler; the
# per-request headers (Date, the rate-limit headers) are spliced in there. An entry lives at most
# its endpoint's `answer_seconds` (server/contract/catalogue.py: never longer than the data's own
# freshness, e.g. the 5-s hot profile copy), and goes at once when this process writes the data
# behind it (`drop(tag)`: the services call it on their writes). Other processes' writes are seen
# when the entry expires, as with the services' own hot copies. Bounded in bytes (LRU).

from __future__ import annotations

import collections
import dataclasses
import http.client
import math
import re
import time
import urllib.parse
from collections.abc import Callable, Hashable, Mapping

from server.serving.encoding import gzip_etag

# Per entry beyond its body: the key, the headers, the bookkeeping (measured ~1 KB; counted so
# that many tiny answers cannot exceed the bound either).
ENTRY_OVERHEAD = 1024
DEFAULT_MAX_BYTES = 32 << 20
# When each tag was last dropped, so that an answer built from data written meanwhile is not kept;
# marks older than this are forgotten (a build ends within its ~2 s deadline).
DROP_MARK_SECONDS = 60.0

Tag = Hashable


class Tags(tuple):
    """Several tags of one answer (built from a player's records and the daily tables): dropped
    when any of them is."""


def tags_of(tag: Tag | None) -> tuple[Tag, ...]:
    if tag is None:
        return ()
    return tuple(tag) if isinstance(tag, Tags) else (tag,)


@dataclasses.dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # fixed: all but Server, Date, the rate-limit headers, Etag
    body: bytes
    etag: str | None
    built: float  # wall clock: the envelope's meta.generated
    expires: float  # monotonic
    tag: Tag | None
    endpoint: str  # the metrics label
    # The body gzipped, kept beside it so that a gzip client costs no compression per request; None
    # when everyone gets the plain body (server.serving.encoding.prebuilt_gzip: small or not compressible).
    gzip_body: bytes | None = None
    # Its HTTP/1.1 heads (plain, gzip), encoded once by the HTTP layer (server.compose.app.OneShotDelegate).
    encoded: dict[str, tuple[bytes, ...]] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.body) + len(self.gzip_body or b"") + ENTRY_OVERHEAD


def fixed_answer(
    status: int, headers: Mapping[str, str], body: bytes, endpoint: str, etag: str | None = None
) -> Answer:
    """An answer that never expires (the 404 of an unknown path: the same for every request)."""
    return Answer(
        status,
        http.client.responses.get(status, "Unknown"),
        tuple(headers.items()),
        body,
        etag,
        0.0,
        math.inf,
        None,
        endpoint,
    )


def answer_key(path: str, query: str) -> str:
    """The path and the raw query with its parameters in the order of their names (a stable sort:
    repeated names keep their order; nothing decoded, empty parts dropped as Tornado drops them):
    `?region=eu&days=30` and `?days=30&region=eu` are one answer, `?days=030` another."""
    if not query:
        return path
    if "&" not in query:  # one parameter (the usual case): nothing to order
        return path + "?" + query
    parts = sorted((part for part in query.split("&") if part), key=_decoded_name)
    return path + "?" + "&".join(parts)


def _decoded_name(part: str) -> str:
    # By the name as the handler reads it, so that `%64ays` and `days` keep their relative order.
    return urllib.parse.unquote_plus(part.split("=", 1)[0])


_ETAG = re.compile(r'\*|(?:W/)?"[^"]*"')


def etag_matches(if_none_match: str, etag: str) -> bool:
    """If-None-Match against our ETag, weak comparison (RFC 9110 13.1.2), as Tornado's
    RequestHandler.check_etag_header does: `*` matches, `W/` is ignored on both sides; the ETag of
    the answer's gzip representation matches too (the client holds the same answer, encoded)."""
    if not if_none_match:
        return False
    ours = etag.removeprefix("W/")
    gzipped = gzip_etag(ours)
    for candidate in _ETAG.findall(if_none_match):
        if candidate == "*" or candidate.removeprefix("W/") in (ours, gzipped):
            return True
    return False


class AnswerCache:
    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self.clock = clock
        self._entries: collections.OrderedDict[str, Answer] = collections.OrderedDict()
        self._by_tag: dict[Tag, set[str]] = {}
        self._dropped_at: dict[Tag, float] = {}
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.drops = 0

    def get(self, key: str) -> Answer | None:
        """The live answer for `key`, counted as a hit or a miss."""
        answer = self._entries.get(key)
        if answer is not None and answer.expires > self.clock():
            self._entries.move_to_end(key)
            self.hits += 1
            return answer
        if answer is not None:
            self._remove(key)
        self.misses += 1
        return None

    def put(self, key: str, answer: Answer, started: float | None = None) -> None:
        """Keep `answer`, unless its data was written after `started` (the build's start, on this
        cache's clock): it may then hold what was read before the write."""
        if answer.size > self.max_bytes // 8:
            return  # one answer may not push out most of the others
        tags = tags_of(answer.tag)
        if started is not None and any(self._dropped_at.get(tag, -math.inf) >= started for tag in tags):
            return
        if key in self._entries:
            self._remove(key)
        self._entries[key] = answer
        self.bytes += answer.size
        for tag in tags:
            self._by_tag.setdefault(tag, set()).add(key)
        # Expired answers at the least recently used end go first (no sweep needed: a busy cache
        # does not fill up with them), then live ones while over the bound.
        now = self.clock()
        while self._entries:
            oldest = next(iter(self._entries))
            if self._entries[oldest].expires > now and self.bytes <= self.max_bytes:
                break
            if self._entries[oldest].expires > now:
                self.evictions += 1
            self._remove(oldest)

    def drop(self, tag: Tag) -> None:
        """Forget every answer built from the data `tag` names (this process just wrote it)."""
        now = self.clock()
        self._dropped_at[tag] = now
        if len(self._dropped_at) > 100_000:
            self._dropped_at = {t: at for t, at in self._dropped_at.items() if at > now - DROP_MARK_SECONDS}
        keys = self._by_tag.pop(tag, None)
        if not keys:
            return
        for key in keys:
            if key in self._entries:
                self._remove(key)
                self.drops += 1

    def clear(self) -> None:
        self._entries.clear()
        self._by_tag.clear()
        self.bytes = 0

    def _remove(self, key: str) -> None:
        answer = self._entries.pop(key)
        self.bytes -= answer.size
        for tag in tags_of(answer.tag):
            keys = self._by_tag.get(tag)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_tag[tag]

    def status(self) -> dict:
        lookups = self.hits + self.misses
        return {
            "entries": len(self._entries),
            "bytes": self.bytes,
            "max_bytes": self.max_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "hit_rate": round(self.hits / lookups, 4) if lookups else None,
            "evictions": self.evictions,
            "dropped_on_write": self.drops,
        }


# --- what an answer is built from: the tags the services drop when they write it ----------------
def player_tag(region: str, account_id: int) -> Tag:
    """A player's profile, snapshots and per-tank records (/player, /history, /tanks)."""
    return ("player", region, int(account_id))


def clan_tag(region: str, clan_id: int) -> Tag:
    """A clan's view and weekly digest (/clan, /clan/.../weekly)."""
    return ("clan", region, int(clan_id))


ONLINE_TAG: Tag = ("online",)  # the player counts (/online, /online/history)
STATUS_TAG: Tag = ("status",)  # /status: nothing drops it; it lives its answer_seconds
# The daily tables (/tanks/stats, /tank, /tanks/marks, the leaderboards, and the marks and standing
# of a player's /tanks and /history): dropped when the daily job stores a region's tables in this
# process, and when this process's decoded copy of a table finds a newer build
# (server/services/tank_stats.py), so no answer kept from the older build outlives the switch.
POPULATION_TAG: Tag = ("population",)


def player_tables_tag(region: str, account_id: int) -> Tags:
    """A player's answer that also shows where the player stands in the daily tables."""
    return Tags((player_tag(region, account_id), POPULATION_TAG))


INDEX_TAG: Tag = ("index",)  # the API index: fixed for the life of the process


def no_answer_cache(tag: Tag) -> None:
    """What a service tells when nothing replays answers (tests and scripts that build it alone)."""
