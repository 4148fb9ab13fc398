"""A small dataset seeded through the real ingest code, and the database's per-operation costs."""

from __future__ import annotations

import dataclasses
import subprocess
import time


async def seed_small(
    uri: str,
    db_name: str,
    sim_url: str,
    players: int,
    clans: int,
    online_minutes: int,
    capped_counters: bool = False,
    tracked_days: int = 31,
) -> dict:
    from server.compose import demo
    from server.compose.bootstrap import connect_store
    from server.compose.wiring import build_services
    from server.contract.config import Config
    from server.serving.ratelimit import RateLimiter

    demo._progress = lambda total, desc: None  # no progress bars in the bench output
    started = time.monotonic()
    if not capped_counters:
        # Before ensure_schema: it only creates the capped collection when none exists.
        from pymongo import MongoClient

        client = MongoClient(uri, serverSelectionTimeoutMS=5000)
        try:
            client[db_name].create_collection("rate_counters")
        finally:
            client.close()
    # The bench's simulator has no quota (--rps 0): seed at full speed, it is not what is measured.
    config = dataclasses.replace(
        Config(), mongodb_uri=uri, db_name=db_name, upstream_base_url=sim_url, jobs=False, upstream_rps=1000.0
    )
    store = await connect_store(config, uri)
    services = await build_services(config, store, RateLimiter(store.rate_counters))
    summary: dict = {"players": [], "clans": [], "online_samples": 0, "notes": [], "tracked": []}
    try:
        lists = demo.SimulatorLists(sim_url)
        accounts = await lists.accounts("eu", players)
        if tracked_days:
            # A month of the tracker's daily pass over a few of them: /history and /tanks have data.
            tracked = accounts[:3]
            outcome = await demo.seed_player_history(
                store, services.upstream, services.ratings_source, {"eu": tracked}, tracked_days, time.time()
            )
            summary["tracked"] = tracked
            summary["notes"].append(f"tracked {len(tracked)} players for {tracked_days} days: {outcome}")
        await demo.seed_current_profiles(services.players, {"eu": accounts})
        rated = []
        for doc in await store.players.get_many("eu", accounts, {"account_id": 1, "ratings": 1}):
            if doc.get("ratings"):
                rated.append(doc["account_id"])
        summary["players"] = sorted(rated)
        if not rated:
            summary["notes"].append("no profile got ratings (expected values missing?)")

        if clans:
            try:
                from server.services.clans import ClanService

                clan_ids = await lists.clans("eu", clans)
                await store.clans.add_seeds("eu", clan_ids)
                # A small member-rating budget keeps seeding quick; the clan view does not need it.
                quick = ClanService(store, services.upstream, services.players, rating_budget=5)
                outcome = await quick.refresh(int(time.time() // 3600))
                cached = await store.clans.get_many("eu", clan_ids)
                summary["clans"] = sorted(cached)
                summary["notes"].append(f"clan refresh: {outcome}")
            except Exception as exc:  # the bench still measures everything else
                summary["notes"].append(f"clans not seeded: {type(exc).__name__}: {exc}")

        minute = int(time.time() // 60)
        for slot in range(minute - online_minutes + 1, minute + 1):
            try:
                await services.online.sample(slot)
                summary["online_samples"] += 1
            except Exception as exc:
                summary["notes"].append(f"online sample {slot} failed: {exc}")
    finally:
        await services.close()
        store.client.close()
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary


def probe_database(uri: str, docs: int = 2000, ops: int = 100) -> dict:
    """Per-operation cost of the rate limiter's database work on this database server.

    The limiter's flush is one unordered bulk of `$inc` upserts plus one `find({_id: {$in}})`
    read-back; both are timed on a capped and on a plain collection of `docs` documents.
    """
    from pymongo import MongoClient, UpdateOne

    client = MongoClient(uri, serverSelectionTimeoutMS=5000)
    db = client["bench_probe"]
    out: dict = {"documents": docs, "operations": ops}
    try:
        for kind in ("capped", "plain"):
            if kind == "capped":
                db.create_collection(kind, capped=True, size=8 << 20)
            collection = db[kind]
            collection.insert_many([{"_id": f"10.0.{i >> 8}.{i & 255}|player|1", "n": 1} for i in range(docs)])
            keys = [f"10.0.{i >> 8}.{i & 255}|player|1" for i in range(0, docs, max(1, docs // ops))][:ops]
            started = time.perf_counter()
            collection.bulk_write([UpdateOne({"_id": k}, {"$inc": {"n": 1}}, upsert=True) for k in keys], ordered=False)
            out[f"{kind}_inc_ms"] = round(1000 * (time.perf_counter() - started) / len(keys), 3)
            started = time.perf_counter()
            found = list(collection.find({"_id": {"$in": keys}}))
            out[f"{kind}_find_in_ms_per_key"] = round(1000 * (time.perf_counter() - started) / max(1, len(found)), 3)
        client.drop_database("bench_probe")
    finally:
        client.close()
    return out


def wait_for_database(uri: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    from pymongo import MongoClient

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"SecantusDB exited with code {proc.returncode}")
        try:
            client = MongoClient(uri, serverSelectionTimeoutMS=500)
            try:
                client.admin.command("ping")
                return
            finally:
                client.close()
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("SecantusDB did not answer a ping in time")
