"""Background job outcomes, kept for /status."""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo.errors import DuplicateKeyError

from store.kinds import Declared, transient

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase


DEMO_SEED = "demo_seed"  # the demo seeding's progress beside the jobs' runs: a status, not a job


class JobRuns:
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "job_runs": transient("each job's last outcome, and the demo seeding's progress, for /status"),
        "job_slots": transient("which process runs each job slot"),
    }

    def __init__(self, db: AsyncIOMotorDatabase[Any]) -> None:
        self.collection = db["job_runs"]
        self.slots = db["job_slots"]

    async def ensure_schema(self) -> None:
        # Claimed slots only need to outlive the longest job interval (a day).
        await self.slots.create_index("claimed_at", expireAfterSeconds=3 * 86400)

    async def claim(self, job: str, slot: int) -> bool:
        """Claim (job, slot) once across all processes; False when it was already claimed."""
        try:
            await self.slots.insert_one({"_id": f"{job}:{slot}", "claimed_at": dt.datetime.now(dt.UTC)})
        except DuplicateKeyError:
            return False
        return True

    async def record(self, job: str, ok: bool, message: str = "", duration: float = 0.0, **extra: Any) -> None:
        now = time.time()
        fields = {"last_run": now, "ok": ok, "message": message[:300], "duration_s": round(duration, 3), **extra}
        fields["last_success" if ok else "last_failure"] = now
        await self.collection.update_one({"_id": job}, {"$set": fields}, upsert=True)

    async def record_demo(self, progress: dict[str, Any]) -> None:
        """The demo seeding's progress (server/compose/demo_progress.py), one document, replaced whole."""
        await self.collection.replace_one({"_id": DEMO_SEED}, {"_id": DEMO_SEED, **progress}, upsert=True)

    async def demo(self) -> dict[str, Any] | None:
        """The demo seeding's last recorded progress; None when no seeding ever ran here."""
        doc = await self.collection.find_one({"_id": DEMO_SEED})
        if doc is None:
            return None
        doc.pop("_id")
        return doc

    async def all(self) -> dict:
        runs = {}
        async for doc in self.collection.find({"_id": {"$ne": DEMO_SEED}}):
            name = doc.pop("_id")
            runs[name] = doc
        return runs
