"""The pages with real URLs: an answer's path without /api/v1 (/player/{id}/{region}, its /session,
/clan/{id}/{region}, /tank/{id}/{region}) answers the site's HTML whose head describes that answer for
link previews (Open Graph and Twitter tags, og:image its PNG card) and names the view the site opens."""

from __future__ import annotations

import html
import http.client
import urllib.parse
from typing import Any

from handlers.base import BaseHandler, ExcInfo, to_api_error
from handlers.params import arguments
from handlers.site import HEAD_ANCHOR, site_description_meta, site_html
from server.contract.catalogue import CLAN, PLAYER, PREFIX, SESSION, TANK, Endpoint
from server.contract.catalogue.model import CARD_SIZES
from server.contract.errors import APIError
from server.serving.cards.layout import summary

SITE_NAME = "statsapi"


def page_html(title: str, view: str, tags: dict[str, str], attribution: str = "") -> str:
    """The site's page with this title, the view it opens (#<view>) and these meta tags in its head."""
    lines = [f'<meta name="statsapi:view" content="{html.escape(view)}">\n']
    for name, value in tags.items():
        attribute = "name" if name.startswith("twitter:") or name == "description" else "property"
        lines.append(f'<meta {attribute}="{name}" content="{html.escape(value)}">\n')
    if "og:url" in tags:
        lines.append(f'<link rel="canonical" href="{html.escape(tags["og:url"])}">\n')
    text = site_html(attribution)
    if "description" in tags:  # this page's, in place of the site's
        text = text.replace(site_description_meta(), "", 1)
    text = text.replace(HEAD_ANCHOR, HEAD_ANCHOR + "".join(lines), 1)
    start, end = text.index("<title>"), text.index("</title>")
    return text[: start + len("<title>")] + html.escape(title) + text[end:]


class PageHandler(BaseHandler):
    """A page of `answer` (the endpoint whose data it shows and whose rate limit it counts in)."""

    answer: Endpoint
    kind: str  # the card's and the site view's kind

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.bucket = cls.answer.bucket
        cls.cache_max_age = cls.answer.cache_max_age

    @property
    def base_url(self) -> str:
        return self.config.public_base_url or f"{self.request.protocol}://{self.request.host}"

    async def get(self, *path: str) -> None:
        values = arguments(self, self.answer.params, path)
        data = await self.load(values)
        api_path = self.answer.full_path.format(**values)
        extra: dict[str, Any] = {
            name: values[name] for name in ("since", "days") if name in values and self.get_query_arguments(name)
        }
        query = urllib.parse.urlencode({**extra, "format": "png"})  # the PNG card of the same answer
        title, description = summary(self.answer.card or self.kind, data)
        width, height = CARD_SIZES["large"]
        tags = {
            "description": description,
            "og:type": "website",
            "og:site_name": SITE_NAME,
            "og:title": title,
            "og:description": description,
            "og:image": f"{self.base_url}{api_path}?{query}",
            "og:image:type": "image/png",
            "og:image:width": str(width),
            "og:image:height": str(height),
            "og:image:alt": f"{title}: {description}",
            "og:url": f"{self.base_url}{self.request.uri}",
            "twitter:card": "summary_large_image",
            "twitter:title": title,
            "twitter:description": description,
        }
        self.set_header("Content-Type", "text/html; charset=utf-8")
        if data.get("live_fetched"):
            self.set_header("Cache-Control", f"public, max-age={PLAYER.live_fetched_max_age}")
        self.finish(page_html(f"{title} · {SITE_NAME}", self.view(values), tags, self.config.attribution))

    async def load(self, values: dict[str, Any]) -> dict[str, Any]:
        """The answer the page shows (its `data`): each page below says which service answers it."""
        raise NotImplementedError  # abstract: PageHandler itself is in no route

    def view(self, values: dict[str, Any]) -> str:
        """The site's view of this answer: its #hash (static/js/main.js opens it)."""
        return f"{self.kind}/{values['region']}/{values[self.answer.params[0].name]}"

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """The site's page saying what went wrong (a 404 for an unknown account), without a card."""
        exc_info: ExcInfo | None = kwargs.get("exc_info")
        error = to_api_error(exc_info[1] if exc_info else None, status_code)
        if error.code != "internal_error":
            self.set_status(error.status_code)
        for name, value in error.headers.items():
            self.set_header(name, value)
        message = error.message[:1].upper() + error.message[1:]
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "public, max-age=60")
        try:
            view = self.view(arguments(self, self.answer.params, tuple(self.path_args)))
        except APIError:
            view = self.kind
        title = f"{http.client.responses.get(error.status_code, 'Error')}: {message}"
        tags = {"description": message, "og:title": title, "og:site_name": SITE_NAME, "twitter:card": "summary"}
        self.finish(page_html(f"{title} · {SITE_NAME}", view, tags, self.config.attribution))


class PlayerPage(PageHandler):
    answer = PLAYER
    kind = "player"

    async def load(self, values: dict[str, Any]) -> dict[str, Any]:
        return await self.services.players.profile(values["region"], values["account_id"], self.client_ip)


class SessionPage(PageHandler):
    answer = SESSION
    kind = "overlay"  # the site's view of a session: the overlay builder

    async def load(self, values: dict[str, Any]) -> dict[str, Any]:
        region, account_id = values["region"], values["account_id"]
        return await self.services.sessions.session(region, account_id, values["since"], self.client_ip)


class ClanPage(PageHandler):
    answer = CLAN
    kind = "clan"

    async def load(self, values: dict[str, Any]) -> dict[str, Any]:
        return await self.services.clans.details(values["region"], values["clan_id"])


class TankPage(PageHandler):
    answer = TANK
    kind = "tank"

    async def load(self, values: dict[str, Any]) -> dict[str, Any]:
        return await self.services.tank_stats.tank(values["region"], values["tank_id"], values["days"])

    def view(self, values: dict[str, Any]) -> str:
        return f"tank/{values['region']}/{values['tank_id']}/{values['days']}"


routes = [
    (page.answer.route_pattern().removeprefix(PREFIX), page) for page in (PlayerPage, SessionPage, ClanPage, TankPage)
]
