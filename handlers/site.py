"""The human site's static files, under a versioned path cached for a year; errors stay JSON like
the rest of the API."""

from __future__ import annotations

import functools
import hashlib
import html
import os
import re
from asyncio import Future
from typing import Any

import tornado.web

from handlers.base import Route, check_etag, method_not_allowed, write_error_answer
from server.contract.catalogue import API_DESCRIPTION, OPENAPI, PREFIX
from server.contract.config import API_VERSION
from server.contract.errors import ALLOWED_METHODS, EXPOSED_HEADERS, APIError, error_envelope, error_headers
from server.serving.encoding import SITE_GZIP, accepts_gzip, compressible
from store.constants import GAMES, REGIONS

# 416 (Content-Range says the size).
RANGE_NOT_SATISFIABLE = error_envelope("range_not_satisfiable")

SITE_CACHE_CONTROL = "public, max-age=300"  # the HTML that names the files, and the preflights
# A file named by the content hash of the whole static tree never changes: a year, and `immutable`
# so that a reload does not even revalidate it.
VERSIONED_CACHE_CONTROL = "public, max-age=31536000, immutable"
# Unversioned names (the overlay's page, old links): a day, then revalidated by ETag.
UNVERSIONED_CACHE_CONTROL = "public, max-age=86400"
ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATIC_DIR = os.path.join(ROOT_DIR, "static")
STATIC_PREFIX = "/static/"
# The modules bundled into one file by scripts/build_site.sh (esbuild), served under /bundle/.
BUNDLE_DIR = os.path.join(ROOT_DIR, "var", "site")
BUNDLE_FILE = "app.js"
BUNDLE_PREFIX = "/bundle/"
JS_DIR = "js"
# The files' bodies are buffered whole (to be gzipped once, with a Content-Length) below this size.
WHOLE_FILE_BYTES = 1 << 20


@functools.cache
def static_version() -> str:
    """The content hash of every file under static/ (names and bytes), read once per process: the
    versioned prefix /static/v-<hash>/ changes whenever any file does. One hash for the tree, not one
    per file, so that the modules' relative imports (./api.js) stay versioned without rewriting them."""
    digest = hashlib.blake2b(digest_size=6)
    for folder, dirs, files in os.walk(STATIC_DIR):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, STATIC_DIR).encode() + b"\0")
            with open(path, "rb") as file:
                digest.update(file.read())
            digest.update(b"\0")
    return digest.hexdigest()


def versioned_prefix() -> str:
    return f"{STATIC_PREFIX}v-{static_version()}/"


def modules_hash() -> str:
    """The content hash of the site's modules (static/js/, names and bytes): what a bundle built
    from them names in its banner (scripts/build_site.sh), and the bundle's versioned path."""
    digest = hashlib.blake2b(digest_size=8)
    folder = os.path.join(STATIC_DIR, JS_DIR)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".js"):
            digest.update(name.encode() + b"\0")
            with open(os.path.join(folder, name), "rb") as file:
                digest.update(file.read())
            digest.update(b"\0")
    return digest.hexdigest()


def bundle_matches(path: str, sources: str) -> bool:
    """Whether the bundle at `path` was built from the modules whose hash is `sources`."""
    try:
        with open(path, "rb") as file:
            head = file.read(200)
    except OSError:
        return False
    return f"statsapi-bundle {sources} ".encode() in head


@functools.cache
def site_bundle() -> str | None:
    """The versioned path of the modules' bundle, read once per process; None when there is none or
    it was built from other modules than these (a module edited since): the page then loads the
    modules themselves, preloaded, and nothing stale is ever served."""
    sources = modules_hash()
    if not bundle_matches(os.path.join(BUNDLE_DIR, BUNDLE_FILE), sources):
        return None
    return f"{BUNDLE_PREFIX}v-{sources}/{BUNDLE_FILE}"


_IMPORT = re.compile(r"""^\s*import\s[^'"]*?['"](\./[\w.-]+\.js)['"]""", re.MULTILINE)


def module_closure(entry: str) -> list[str]:
    """The modules `entry` (a path under static/) imports statically, directly or not, in the order
    first met: what the first view needs before it can run (preloaded by the page)."""
    seen: list[str] = []
    pending = [entry]
    while pending:
        module = pending.pop(0)
        with open(os.path.join(STATIC_DIR, module), encoding="utf-8") as file:
            text = file.read()
        for relative in _IMPORT.findall(text):
            name = os.path.normpath(os.path.join(os.path.dirname(module), relative))
            if name not in seen and name != entry:
                seen.append(name)
                pending.append(name)
    return seen


HEAD_ANCHOR = '<meta name="color-scheme" content="light dark">\n'
ENTRY_MODULE = "js/main.js"


@functools.cache
def site_html(attribution: str = "") -> str:
    """The site's page (static/index.html) as served, built once per process: its files named by
    their versioned path, its modules as their bundle (one request) or, without a current one, the
    modules of the first view preloaded (main.js's static imports, so the browser fetches them at
    once instead of one level of imports per round trip), the
    opening line and meta description what the catalogue says the API is, the index preloaded, and the intro's facts
    and `attribution` drawn in the HTML (the index fills them the same: nothing moves when it loads)."""
    with open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8") as file:
        text = file.read()
    assert HEAD_ANCHOR in text and "<title>" in text, "static/index.html lost the head the pages extend"
    entry = f'<script type="module" src="{STATIC_PREFIX}{ENTRY_MODULE}"></script>\n'
    assert entry in text, "static/index.html no longer loads its entry module"
    bundle = site_bundle()
    if bundle is not None:  # one request for every module (and one gzip stream)
        text = text.replace(entry, f'<script type="module" src="{bundle}"></script>\n', 1)
        entry, preloads = f'<script type="module" src="{bundle}"></script>\n', ""
    else:
        preloads = "".join(
            f'<link rel="modulepreload" href="{STATIC_PREFIX}{module}">\n' for module in module_closure(ENTRY_MODULE)
        )
    # The index every view waits for (docs.js loadIndex fetches this URL): asked beside the modules,
    # not after them (a round trip less before the first view's own request).
    preloads += f'<link rel="preload" href="{PREFIX}" as="fetch" crossorigin="anonymous">\n'

    text = text.replace(entry, entry + preloads, 1)
    description = html.escape(API_DESCRIPTION)
    text = text.replace(
        '<p class="lead" id="intro-description"></p>', f'<p class="lead" id="intro-description">{description}</p>', 1
    )
    text = text.replace(HEAD_ANCHOR, HEAD_ANCHOR + site_description_meta(), 1)
    text = _fill(text, '<dl class="facts" id="intro-facts">', "</dl>", intro_facts())
    if attribution:
        text = _fill(text, '<blockquote id="attribution-text">', "</blockquote>", linkified(attribution))
        text = _fill(text, '<p id="footer-attribution">', "</p>", linkified(attribution))
        shown = '<figure class="attribution" id="attribution">'
        text = text.replace('<figure class="attribution" id="attribution" hidden>', shown, 1)
        assert shown in text, "static/index.html lost its attribution box"
    return text.replace(f'"{STATIC_PREFIX}', f'"{versioned_prefix()}')


def _fill(text: str, opening: str, closing: str, inner: str) -> str:
    assert opening + closing in text, f"static/index.html lost its empty {opening}"
    return text.replace(opening + closing, opening + inner + closing, 1)


def intro_facts() -> str:
    """The intro's facts as static/js/docs.js renderIndex draws them from the index (the base URL
    as a path: the page completes it with its origin)."""
    facts = [
        ("Version", f"<code>{html.escape(API_VERSION)}</code>"),
        ("Methods", html.escape(ALLOWED_METHODS)),
        ("Regions", html.escape(", ".join(REGIONS))),
        ("Games", html.escape(", ".join(GAMES))),
        ("OpenAPI", f'<a href="{html.escape(OPENAPI.full_path)}"><code>{html.escape(OPENAPI.full_path)}</code></a>'),
        ("Base URL", f"<code>{html.escape(PREFIX)}</code>"),
    ]
    return "".join(f"<div><dt>{term}</dt><dd>{value}</dd></div>" for term, value in facts)


def linkified(text: str) -> str:
    """`text` with its URLs as links (static/js/api.js linkify)."""
    parts, last = [], 0
    for match in re.finditer(r"https?://[^\s)]+", text):
        url = html.escape(match.group(0))
        parts += [html.escape(text[last : match.start()]), f'<a href="{url}">{url}</a>']
        last = match.end()
    return "".join(parts) + html.escape(text[last:])


def site_description_meta() -> str:
    return f'<meta name="description" content="{html.escape(API_DESCRIPTION)}">\n'


class HomePage(tornado.web.RequestHandler):
    """The site at /: its page, the same bytes for every request (an ETag; gzip compressed once)."""

    SUPPORTED_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")

    def set_default_headers(self) -> None:
        self.set_header("Access-Control-Allow-Origin", "*")
        self.set_header("Access-Control-Expose-Headers", EXPOSED_HEADERS)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", SITE_CACHE_CONTROL)

    def get(self) -> None:
        body = site_html(self.settings["config"].attribution).encode()
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Etag", etag)
        if check_etag(self):
            self.set_status(304)
            self.finish()
            return
        if accepts_gzip(self.request.headers.get("Accept-Encoding")):
            self.request.statsapi_gzip = (body, SITE_GZIP.get(etag, body))  # type: ignore[attr-defined]
        self.finish(body)

    def head(self) -> None:
        self.get()

    def options(self) -> None:
        self.set_status(204)
        self.set_header("Allow", ALLOWED_METHODS)
        self.finish()

    post = put = patch = delete = method_not_allowed

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        write_error_answer(self, status_code, kwargs.get("exc_info"))


class SiteHandler(tornado.web.StaticFileHandler):
    SUPPORTED_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")

    def set_default_headers(self) -> None:
        self.set_header("Access-Control-Allow-Origin", "*")
        self.set_header("Access-Control-Expose-Headers", EXPOSED_HEADERS)
        self.set_header("X-Content-Type-Options", "nosniff")

    @classmethod
    def get_absolute_path(cls, root: str, path: str) -> str:
        if "\x00" in path:  # the filesystem would raise ValueError: a path no file can have
            raise APIError("unknown_endpoint")
        return super().get_absolute_path(root, path)

    versioned = False  # VersionedSiteHandler: the path starts with v-<static_version()>/
    _whole = False

    async def get(self, path: str, include_body: bool = True) -> None:
        if self.versioned:
            version, _, path = path.partition("/")
            # An older version's name (a page loaded before a deploy) gets today's file, but not
            # for a year: the name no longer says what is in it.
            self.versioned = self.names_current(version)
        # A compressible file for a gzip client, whole (no Range): buffered, then sent gzipped
        # from bytes compressed once per file (ContentEncoding reads request.statsapi_gzip).
        self._whole = "Range" not in self.request.headers and accepts_gzip(self.request.headers.get("Accept-Encoding"))
        await super().get(path, include_body)

    def names_current(self, version: str) -> bool:
        """Whether a versioned path's `v-<hash>` names the files served now."""
        return version == "v-" + static_version()

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", VERSIONED_CACHE_CONTROL if self.versioned else UNVERSIONED_CACHE_CONTROL)

    def check_etag_header(self) -> bool:
        return check_etag(self)

    def flush(self, include_footers: bool = False) -> Future[None]:
        if self._whole and not include_footers and sum(map(len, self._write_buffer)) < WHOLE_FILE_BYTES:
            done: Future[None] = Future()
            done.set_result(None)
            return done  # sent by finish(), whole
        self._whole = False
        return super().flush(include_footers)

    def options(self, *args: str, **kwargs: str) -> None:
        self.set_status(204)
        self.set_header("Allow", ALLOWED_METHODS)
        self.set_header("Cache-Control", SITE_CACHE_CONTROL)
        self.finish()

    def finish(self, chunk: str | bytes | dict[str, Any] | None = None) -> Future[None]:
        if self.get_status() == 416 and chunk is None and not self._write_buffer:
            # StaticFileHandler answers a Range past the end with an empty text/plain 416 that
            # would carry the files' Cache-Control: enveloped like every error, never cached.
            for name, value in error_headers(416, "range_not_satisfiable").items():
                self.set_header(name, value)
            chunk = RANGE_NOT_SATISFIABLE
        if self._whole and chunk is None and self._write_buffer and self.get_status() == 200:
            body = b"".join(self._write_buffer)
            self._write_buffer = [body]
            etag = self._headers.get("Etag")
            if etag is not None and compressible(str(self._headers.get("Content-Type", ""))):
                self.request.statsapi_gzip = (body, SITE_GZIP.get(etag, body))  # type: ignore[attr-defined]
        return super().finish(chunk)

    post = put = patch = delete = method_not_allowed

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        write_error_answer(self, status_code, kwargs.get("exc_info"))


class VersionedSiteHandler(SiteHandler):
    """The static files under /static/v-<hash>/ (named so by the pages): cached for a year."""

    versioned = True


class BundleHandler(SiteHandler):
    """The modules' bundle and its source map under /bundle/v-<modules hash>/ (site_bundle): cached for
    a year while the file on disk was built from the modules of that hash (a rebuild after a deploy
    keeps the old name's answers short-lived, as an older static version's)."""

    versioned = True

    def names_current(self, version: str) -> bool:
        return bundle_matches(os.path.join(self.root, BUNDLE_FILE), version.removeprefix("v-"))


routes: list[Route] = [
    (r"/", HomePage),
    # The session overlay (a streaming program's browser source): /overlay/?region=&account=&since=
    (r"/overlay/()", SiteHandler, {"path": os.path.join(STATIC_DIR, "overlay"), "default_filename": "index.html"}),
    (r"/static/(v-[0-9a-f]+/.+)", VersionedSiteHandler, {"path": STATIC_DIR}),
    (r"/bundle/(v-[0-9a-f]+/.+)", BundleHandler, {"path": BUNDLE_DIR}),
    (r"/static/(.+)", SiteHandler, {"path": STATIC_DIR}),
]
