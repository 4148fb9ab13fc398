"""Background job outcomes, kept for /status."""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any, ClassVar

from pymongo.errors import DuplicateKeyError

from store.kinds import Declared, transient

if TYPE_CHECKING:
    from motor.motor_asyncio import AsyncIOMotorDatabase


class JobRuns:
    COLLECTIONS: ClassVar[dict[str, Declared]] = {
        "job_runs": transient("each job's last outcome, for /status"),
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

    async def all(self) -> dict:
        runs = {}
        async for doc in self.collection.find({}):
            name = doc.pop("_id")
            runs[name] = doc
        return runs
