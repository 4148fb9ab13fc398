"""Bulk loader of tracked data for scripts/bench_scale.py: what the tracker's pass writes, without the pass.

For each account and day it makes the decisions Tracker.visit makes for that account (played when
its last_battle_time moved or it has no record yet; an idle account's newest record kept when
rekey_due) through the tracker's own pure functions: tank_state, account_assist (the record's `s`
and the tracked `assist`), plan_visit (TankRecords.record), day_change (TankChanges.change, with
the assistance change), mastery_of (the tracked `mastery`), build_profile, compute_ratings,
snapshot_of. It yields the documents the tracker's writers would leave in the database
(TankRecords.save replaces by _id; TankChanges.save likewise; Players.save_snapshots upserts by
(region, account_id, date) with `day`; Tracked.track_many then mark_visited / mark_days), so they
can be inserted thousands at a time.
The per-tank changes (tank_changes) are kept for the last CHANGE_DAYS (100) of the days only, as
the store's retention leaves them at the last day's end (server/jobs/retention.py deletes a change
once its day `x` is CHANGE_DAYS old). tests/test_bench_scale.py checks that the documents equal
what the real pass writes for the same accounts and days. (One exception, only with the
simulator's account on the last day, load_account's `truth_last_day`: that day's change is the
model's day, not the jump from the model's counters to the simulator's.)

The players (`SyntheticPlayer`): a seeded model per account: a career of 5-40 tanks before the
first day (drawn by the tanks' popularity: a fixed seeded order, the n-th tank drawn in proportion
to 1 / (n + 20), so a few tanks have many players, as on a server), then each day played with the
account's own probability (30-50 %), 1-6 tanks a playing day (half of them among the account's 3
favourites, its first tanks; now and then a new one), 1-6 battles on each. The favourites are what
gives a tank's marks of excellence their sample: the players with 10 battles on it in 14 days. Besides the counters every tank has, each tank
takes damage (damage_received) and a self-propelled gun (one tank id in eight here) stuns
(stun_assisted_damage); the account's spotting and tracking assistance grow with its damage at its
own shares, and account/info gives them as the upstream does: per-battle averages rounded to 0.01
(statistics.all avg_damage_assisted_radio / _track, which account_assist turns back into totals);
tanks/stats gives each tank's mastery badge (mark_of_mastery), kept as the tracked `mastery`.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from bson import Binary

from server.domain import ratings as rating_maths
from server.domain.days import DAY_SECONDS, day_start
from server.domain.profiles import build_profile, snapshot_of, wtr_of
from server.domain.records import unpack
from server.services.tracker import account_assist, day_change, mastery_of, plan_visit, rekey_due, tank_state
from server.upstream.client import ASSIST_AVERAGES
from store.constants import TANK_COUNTERS
from store.population import CHANGE_DAYS
from store.tracker import slice_of, tracked_id

# (info, raw tanks/stats) of an account as of a day's end: what account/info and tanks/stats answer.
Truth = Callable[[str, int, float], tuple[dict | None, list | None]]


class Loaded(NamedTuple):
    """Every document the pass leaves for one account (load_account)."""

    records: list[dict]  # tank_records
    snapshots: list[dict]  # snapshots
    tracked: dict  # the tracked document
    changes: list[dict]  # tank_changes (the retained days)


def days_from(first: str, count: int) -> list[str]:
    start = dt.date.fromisoformat(first)
    return [(start + dt.timedelta(days=n)).isoformat() for n in range(count)]


@functools.lru_cache(maxsize=4)
def _popularity(tank_ids: tuple[int, ...]) -> list[float]:
    """Cumulative weights of `tank_ids` for random.choices: the tanks in a fixed seeded order, the
    n-th (from 0) weighing 1 / (n + 20)."""
    order = list(range(len(tank_ids)))
    random.Random("tank popularity").shuffle(order)
    weights = [0.0] * len(tank_ids)
    for rank, index in enumerate(order):
        weights[index] = 1.0 / (rank + 20)
    return list(itertools.accumulate(weights))


class SyntheticPlayer:
    """One account's per-tank career counters day by day (a seeded model, cheap to advance)."""

    def __init__(self, region: str, account_id: int, tank_ids: Sequence[int], first_day: str, nickname: str):
        self.region = region
        self.account_id = account_id
        self.nickname = nickname
        self.rng = random.Random(f"{region}:{account_id}")
        rng = self.rng
        self.tank_ids = tank_ids
        self.play_share = rng.uniform(0.3, 0.5)
        self.skill = rng.uniform(0.44, 0.58)
        # The account's spotting and tracking assistance per damage dealt (account/info has them
        # for the account only), and their totals so far.
        self.radio_share = rng.uniform(0.1, 0.5)
        self.track_share = rng.uniform(0.05, 0.3)
        self.radio = 0
        self.track = 0
        self.created_at = int(day_start(first_day)) - rng.randint(400, 3000) * DAY_SECONDS
        self.last_battle_time = self.created_at + 3600
        self.state: dict[int, list[int]] = {}
        owned: list[int] = []
        wanted = min(len(tank_ids), rng.randint(5, 40))
        popularity = _popularity(tuple(tank_ids))
        while len(owned) < wanted:
            tank_id = rng.choices(tank_ids, cum_weights=popularity)[0]
            if tank_id not in self.state:
                owned.append(tank_id)
                self._play(tank_id, rng.randint(10, 400))
        self.favourites = owned[:3]
        self.garage = sorted(self.state)

    def _play(self, tank_id: int, battles: int) -> None:
        rng = self.rng
        row = self.state.get(tank_id)
        if row is None:
            row = self.state[tank_id] = [0] * len(TANK_COUNTERS)
        wins = max(0, min(battles, int(battles * self.skill + rng.uniform(-0.5, 0.5))))
        draws = 1 if battles >= 20 and rng.random() < 0.3 else 0
        draws = min(draws, battles - wins)
        shots = battles * rng.randint(5, 12)
        tier = 1 + tank_id % 10
        damage = int(battles * 180 * tier * rng.uniform(0.6, 1.4))
        # battles, wins, losses, draws, damage_dealt, frags, spotted, dropped_capture_points,
        # capture_points, xp, survived_battles, shots, hits, damage_received, stun_assisted_damage
        gains = (
            battles,
            wins,
            battles - wins - draws,
            draws,
            damage,
            int(battles * rng.uniform(0.4, 1.4)),
            int(battles * rng.uniform(0.5, 1.8)),
            int(battles * rng.uniform(0.0, 1.0)),
            int(battles * rng.uniform(0.0, 1.5)),
            int(battles * (300 + 60 * tier) * rng.uniform(0.7, 1.3)),
            int(battles * rng.uniform(0.15, 0.45)),
            shots,
            int(shots * rng.uniform(0.55, 0.85)),
            int(battles * 160 * tier * rng.uniform(0.5, 1.3)),
            int(damage * rng.uniform(0.3, 0.9)) if tank_id % 8 == 3 else 0,  # a self-propelled gun's stuns
        )
        for i, gain in enumerate(gains):
            row[i] += gain
        self.radio += int(damage * self.radio_share * rng.uniform(0.8, 1.2))
        self.track += int(damage * self.track_share * rng.uniform(0.8, 1.2))

    def advance(self, day: str) -> bool:
        """Play `day` (or not); True when the account played."""
        rng = self.rng
        if rng.random() >= self.play_share:
            return False
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                tank_id = rng.choice(self.favourites)
            elif rng.random() < 0.04:
                tank_id = rng.choice(self.tank_ids)
                if tank_id not in self.state:
                    self.garage.append(tank_id)
            else:
                tank_id = rng.choice(self.garage)
            self._play(tank_id, rng.randint(1, 6))
        self.last_battle_time = int(day_start(day)) + rng.randint(36000, 80000)
        return True

    def info(self, totals: bool = True) -> dict:
        """The account/info entry (with `fields`: statistics.all of the counters the service asks
        for, and the spotting and tracking assistance as per-battle averages rounded to 0.01)."""
        stats: dict[str, Any] = {name: 0 for name in TANK_COUNTERS}
        radio = track = 0.0
        if totals:
            for row in self.state.values():
                for name, value in zip(TANK_COUNTERS, row):
                    stats[name] += value
            if stats["battles"]:
                radio = round(self.radio / stats["battles"], 2)
                track = round(self.track / stats["battles"], 2)
        stats.update(zip(ASSIST_AVERAGES, (radio, track)))
        return {
            "account_id": self.account_id,
            "nickname": self.nickname,
            "clan_id": None,
            "created_at": self.created_at,
            "last_battle_time": self.last_battle_time,
            "updated_at": self.last_battle_time,
            "statistics": {"all": stats},
        }

    def raw_tanks(self) -> list[dict]:
        """The tanks/stats entries (with `fields`: tank_id, mark_of_mastery and the counters of `all`);
        the mastery badge (0-4) grows with the battles on the tank and the account's skill."""
        return [
            {
                "tank_id": tank_id,
                "mark_of_mastery": min(4, int(row[0] * self.skill / 40)),
                "all": dict(zip(TANK_COUNTERS, row)),
            }
            for tank_id, row in sorted(self.state.items())
        ]


def visit(
    book: dict,
    region: str,
    account_id: int,
    day: str,
    now: float,
    info: dict | None,
    raw_tanks: Callable[[], list | None],
    expected: Any,
    tiers: dict[int, int],
    stored: dict[int, list[int]] | None = None,
    with_change: bool = True,
) -> tuple[list[dict], dict | None, dict, dict[int, list[int]] | None, dict | None]:
    """One account's visit on `day` as Tracker.visit makes it: (records, snapshot or None, tracked
    fields to $set, the per-tank state now stored or None when unchanged, the tank_changes
    document or None). `book`: the tracked document as the pass reads it (with its packed
    `state`); `stored`: unpack(book["state"]) when the caller kept it (the same numbers, without
    unpacking them again); `with_change`: False skips the change (a day retention has deleted)."""
    if info is None:
        raise ValueError(f"{region}:{account_id} unknown upstream on {day}")  # the pass would park it
    if not book.get("record_day") or info.get("last_battle_time") != book.get("last_battle_time"):
        raw = raw_tanks()
        if raw is None:
            raise ValueError(f"{region}:{account_id} has no tanks on {day}")
        state = tank_state(raw)
        base = None
        if book.get("record_day") and "state" in book:
            base = stored if stored is not None else unpack(book["state"])
        assist = account_assist(info)
        records, set_fields = plan_visit(region, account_id, book, base, state, day, assist=assist)
        change = (
            day_change(region, account_id, base, state, day, base_assist=book.get("assist"), assist=assist)
            if with_change
            else None
        )
        fields: dict[str, Any] = {"last_visit_day": day, "last_battle_time": info.get("last_battle_time")}
        fields.update(set_fields, mastery=mastery_of(raw), clan_id=info.get("clan_id"))
        # The synthetic accounts have no WTR: account/wtr answers null for them, as the pass stores it.
        wtr = wtr_of({account_id: None}, account_id)
        fields["wtr"] = wtr["wtr"]
        nickname = info.get("nickname")
        if nickname:
            fields.update(nickname=nickname, nickname_lower=nickname.lower())
        doc = build_profile(region, account_id, info, raw, now, wtr)
        if expected is not None:
            doc["ratings"] = rating_maths.compute_ratings(doc["totals"], doc["tanks"], expected, tiers)
            doc["ratings"]["calculated_at"] = int(now)
        snapshot = snapshot_of(doc)
        snapshot["day"] = dt.datetime.fromisoformat(snapshot["date"]).replace(tzinfo=dt.UTC)
        return records, snapshot, fields, state if "state" in fields else None, change
    if rekey_due(book, day) and "state" in book:
        base = stored if stored is not None else unpack(book["state"])
        records, set_fields = plan_visit(region, account_id, book, base, None, day)
        return records, None, {"last_visit_day": day, **set_fields}, None, None
    return [], None, {"last_visit_day": day}, None, None


def load_account(
    player: SyntheticPlayer,
    days: Sequence[str],
    *,
    since: float,
    until: float,
    expected: Any,
    tiers: dict[int, int],
    truth_last_day: Truth | None = None,
    change_days: int = CHANGE_DAYS,
) -> Loaded:
    """Every document the pass leaves for `player` visited on each of `days` (at each day's last
    second): tank records, snapshots, the tracked document and the per-tank changes of the last
    `change_days` days (what retention keeps at the last day's end: a change expires when its
    day is `change_days` old). With `truth_last_day`, the last day's visit reads what that gives
    (the simulator's account as of then) instead of the model, so a real pass on the next day
    finds the state the upstream has; that day's change stays the model's day (the real pass
    would write the jump from the model's counters to the simulator's: every tank of the
    simulator's account, its career, as played that day)."""
    region, account_id = player.region, player.account_id
    book: dict[str, Any] = {
        "_id": tracked_id(region, account_id),
        "region": region,
        "account_id": int(account_id),
        "slice": slice_of(region, account_id),
        "since": since,
        "last_visit_day": "",
        "until": until,
    }
    records: dict[str, dict] = {}
    changes: dict[str, dict] = {}
    snapshots: list[dict] = []
    last = len(days) - 1
    kept_from = len(days) - change_days  # the first day whose change retention keeps
    stored: dict[int, list[int]] | None = None  # unpack(book["state"]), kept
    for n, day in enumerate(days):
        now = day_start(day) + DAY_SECONDS - 1
        if truth_last_day is not None and n == last:
            # The day's change is the model's day (as the other days'), not the jump from the
            # model's counters to the simulator's: no real account makes that jump (it would count
            # every tank of the simulator's account, its whole career, as played that day).
            model_change = None
            if player.advance(day) and n >= kept_from and stored is not None and book.get("record_day"):
                model_change = day_change(
                    region,
                    account_id,
                    stored,
                    tank_state(player.raw_tanks()),
                    day,
                    base_assist=book.get("assist"),
                    assist=account_assist(player.info()),
                )
            info, raw = truth_last_day(region, account_id, now)
            made = visit(book, region, account_id, day, now, info, lambda: raw, expected, tiers, stored, False)
            made = (*made[:4], model_change)
        else:
            played = player.advance(day)
            if not played and book.get("record_day") and not rekey_due(book, day):
                book["last_visit_day"] = day  # the common idle day: the visit mark only
                continue
            info = player.info(totals=played or not book.get("record_day"))
            made = visit(
                book, region, account_id, day, now, info, player.raw_tanks, expected, tiers, stored, n >= kept_from
            )
        new_records, snapshot, fields, state, change = made
        if state is not None:
            stored = state
        for doc in new_records:
            records[doc["_id"]] = doc  # a rewrite of the same account-day replaces it (TankRecords.save)
        if change is not None:
            changes[change["_id"]] = change  # a rewrite of the same account-day replaces it (TankChanges.save)
        if snapshot is not None:
            snapshots.append(snapshot)
        book.update(fields)
    if "state" in book:
        book["state"] = Binary(book["state"])  # mark_visited stores it as BSON binary
    if book.get("nickname"):
        book["nick_indexed"] = book["nickname"]  # the search's prefix table told of it (Tracked.sync_nicknames)
    return Loaded(list(records.values()), snapshots, book, list(changes.values()))


def load_accounts(
    players: Sequence[SyntheticPlayer],
    days: Sequence[str],
    *,
    since: float,
    until: float,
    expected: Any,
    tiers_by_region: dict[str, dict[int, int]],
    truth_last_day: Truth | None = None,
) -> Iterator[Loaded]:
    for player in players:
        yield load_account(
            player,
            days,
            since=since,
            until=until,
            expected=expected,
            tiers=tiers_by_region.get(player.region, {}),
            truth_last_day=truth_last_day,
        )
