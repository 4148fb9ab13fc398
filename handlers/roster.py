"""A battle's roster: many players' ratings at once."""

from __future__ import annotations

import dataclasses

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from server.contract.catalogue import ROSTER, parse_value
from server.contract.catalogue.params import ACCOUNT_ID
from server.contract.catalogue.roster import ACCOUNTS, NAMES, ROSTER_MOST
from server.contract.errors import APIError
from server.serving.answers import Tags, player_tag

TANK_ID = dataclasses.replace(ACCOUNT_ID, name="tank_id", maximum=2**31 - 1)


@arguments_of(ROSTER)
@dataclasses.dataclass(frozen=True, slots=True)
class RosterArgs:
    region: str
    accounts: str | None
    names: str | None


def roster_entries(text: str, code: str, what: str) -> list[tuple[str, int | None]]:
    """`text` (the parameter's pattern already checked) as (entry, tank_id or None) pairs: at most
    ROSTER_MOST, none twice (names compared case-insensitively), or APIError(code)."""
    parts = text.split(",")
    if len(parts) > ROSTER_MOST:
        raise APIError(code, f"{what} names at most {ROSTER_MOST} entries ({len(parts)} given)")
    out: list[tuple[str, int | None]] = []
    seen: set[str] = set()
    for part in parts:
        entry, _, tank = part.partition(":")
        key = entry.lower()
        if key in seen:
            raise APIError(code, f"{what} names {entry} twice")
        seen.add(key)
        out.append((entry, parse_value(dataclasses.replace(TANK_ID, error=code), tank) if tank else None))
    return out


class RosterHandler(BaseHandler):
    endpoint = ROSTER

    async def get(self, *path: str) -> None:
        args = self.arguments(path, RosterArgs)
        if (args.accounts is None) == (args.names is None):
            raise APIError("invalid_roster", "give accounts or names (one of them)")
        roster = self.services.roster
        if args.accounts is not None:
            entries = roster_entries(args.accounts, ACCOUNTS.error, ACCOUNTS.name)
            accounts = [(parse_value(dataclasses.replace(ACCOUNT_ID, error=ACCOUNTS.error), a), t) for a, t in entries]
            data = await roster.by_accounts(args.region, accounts)
        else:
            data = await roster.by_names(args.region, roster_entries(args.names or "", NAMES.error, NAMES.name))
        # Replayed briefly (answer_seconds) unless a row failed: dropped when one of its profiles is written.
        served = [row["account_id"] for row in data["rows"] if row["account_id"] is not None]
        tag = Tags(player_tag(args.region, a) for a in served) if data["retry_after"] is None else None
        self.respond(data, tag=tag)


routes = api_routes(RosterHandler)
