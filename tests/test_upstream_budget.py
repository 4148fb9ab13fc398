"""The upstream budget: rate cap over any window, priorities, live reserve, slow-down, sharing."""

from __future__ import annotations

import asyncio
import time

import pytest

from server.upstream.budget import RECOVER_EVERY, UpstreamBudget


def most_in_any_window(times: list[float], seconds: float = 1.0) -> int:
    times = sorted(times)
    best = start = 0
    for end, t in enumerate(times):
        while times[start] <= t - seconds:
            start += 1
        best = max(best, end - start + 1)
    return best


class FakeClock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.gen_test(timeout=20)
async def test_never_more_than_the_rate_in_any_second():
    budget = UpstreamBudget(20, hold_first_window=False)
    sent: list[float] = []

    async def one(caller: str) -> None:
        async with budget.slot(caller):
            sent.append(time.monotonic())
            await asyncio.sleep(0.02)  # the upstream answering

    callers = ["live", "clans", "reference", "online", "refresh"]
    await asyncio.gather(*(one(callers[i % len(callers)]) for i in range(70)))
    assert len(sent) == 70
    assert most_in_any_window(sent) <= 20
    # It is a cap, not a trickle: 70 requests at 20/s take about three windows, not 70 steps.
    assert budget.status()["requests_last_minute"] == 70


@pytest.mark.gen_test(timeout=20)
async def test_a_slot_is_held_until_a_window_after_the_answer():
    """However late the loop really sent a request, the upstream saw it before its answer: a
    window counted from the answer can never hold more than k arrivals of one of its seconds."""
    budget = UpstreamBudget(5, hold_first_window=False)
    k, seconds, _ = budget.window()
    answered: list[float] = []
    granted: list[float] = []

    async def slow(delay: float) -> None:
        async with budget.slot("clans"):
            granted.append(time.monotonic())
            await asyncio.sleep(delay)
            answered.append(time.monotonic())

    await asyncio.gather(*(slow(0.4) for _ in range(k)))
    async with budget.slot("live"):
        granted.append(time.monotonic())
    # The next request went one window after the first answer, not one window after the grants.
    assert granted[-1] - min(answered) >= seconds - 0.01
    assert granted[-1] - min(granted[:-1]) >= 0.4 + seconds - 0.02


@pytest.mark.gen_test(timeout=20)
async def test_live_lookups_overtake_queued_background_work():
    budget = UpstreamBudget(10, hold_first_window=False)
    order: list[str] = []

    async def one(caller: str) -> None:
        async with budget.slot(caller):
            order.append(caller)

    background = [asyncio.ensure_future(one("clans")) for _ in range(25)]
    await asyncio.sleep(0.05)  # the first window is used, the rest of the clan work queues
    live = [asyncio.ensure_future(one("live")) for _ in range(4)]
    await asyncio.gather(*background, *live)
    # Every live request went before the clan requests that were queued ahead of it.
    last_live = max(i for i, caller in enumerate(order) if caller == "live")
    assert order[: last_live + 1].count("clans") <= 10
    assert budget.status()["requests_last_minute_by_caller"] == {"clans": 25, "live": 4}


@pytest.mark.gen_test(timeout=10)
async def test_background_leaves_slots_free_for_a_live_lookup():
    budget = UpstreamBudget(10, hold_first_window=False)
    k, seconds, reserve = budget.window()
    assert (k, reserve) == (10, 2)
    for _ in range(k - reserve):
        assert await budget.acquire("clans") == 0.0
        budget.release()
    blocked = asyncio.ensure_future(budget.acquire("tracker"))
    await asyncio.sleep(0.05)
    assert not blocked.done()  # background work has used its share of this window
    # ... while a user's lookup (account/info + tanks/stats) is sent at once.
    for _ in range(2):
        async with budget.slot("live") as waited:
            assert waited == 0.0
    assert await blocked >= 0.5


@pytest.mark.gen_test(timeout=10)
async def test_a_cancelled_waiter_gives_its_place_back():
    budget = UpstreamBudget(2, hold_first_window=False)
    for _ in range(2):
        async with budget.slot("live"):
            pass
    waiter = asyncio.ensure_future(budget.acquire("clans"))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert budget.status()["queued"] == {}
    async with budget.slot("live") as waited:
        assert waited > 0.5  # the window still counts what was sent
    assert budget.total == 3 and budget.status()["in_flight"] == 0


@pytest.mark.gen_test(timeout=10)
async def test_a_waiter_cancelled_as_it_is_granted_does_not_leak_its_slot():
    """A live lookup's deadline can fire just as its slot is granted: the slot must come back."""
    budget = UpstreamBudget(1, hold_first_window=False)
    async with budget.slot("live"):
        pass
    waiter = asyncio.ensure_future(budget.acquire("live"))
    await asyncio.sleep(0)
    budget._timer.cancel()  # grant by hand, so the cancellation lands between grant and resume
    await asyncio.sleep(budget.window()[1] + 0.05)
    budget._grant()
    assert budget.status()["in_flight"] == 1 and waiter.done() is False
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert budget.status()["in_flight"] == 0  # else every later request would wait forever


def test_refusal_halves_the_rate_then_it_recovers():
    clock, wall = FakeClock(), FakeClock(1_700_000_000.0)
    budget = UpstreamBudget(10, clock=clock, wall=wall, hold_first_window=False)
    full = budget.effective_rate()
    budget.note_refusal()
    assert budget.effective_rate() == pytest.approx(full / 2)
    assert budget.status()["request_limit_exceeded"] == {"count": 1, "last": wall.now}
    assert budget.status()["slowed_down"] is True
    budget.note_refusal()
    assert budget.effective_rate() == pytest.approx(full / 4, rel=0.3)
    # A tenth of the rate comes back every RECOVER_EVERY seconds without another refusal.
    for _ in range(20):
        clock.now += RECOVER_EVERY
        budget.window()
    assert budget.effective_rate() == pytest.approx(full)
    assert budget.status()["slowed_down"] is False


@pytest.mark.gen_test(timeout=10)
async def test_a_refusal_pauses_sending_for_one_window():
    budget = UpstreamBudget(10, hold_first_window=False)
    async with budget.slot("live"):
        budget.note_refusal()
    async with budget.slot("live") as waited:
        assert waited >= 1.0  # nothing goes out until the upstream's second has passed


@pytest.mark.gen_test(timeout=10)
async def test_a_new_budget_waits_one_window_before_its_first_request():
    """The upstream still counts what a predecessor process sent just before a restart."""
    budget = UpstreamBudget(10)
    async with budget.slot("live") as waited:
        assert waited >= 1.0


def test_processes_split_the_rate():
    budget = UpstreamBudget(20, hold_first_window=False)
    budget.set_processes(4)
    status = budget.status()
    assert status["processes_sharing"] == 4 and status["share_per_second"] == 5.0
    assert status["effective_per_second"] <= 5.0
    budget.set_processes(3)  # 6.67/s each: whole requests per window, never more than the share
    assert budget.window()[0] == 6 and budget.effective_rate() <= 20 / 3
    budget = UpstreamBudget(2, hold_first_window=False)
    budget.set_processes(5)  # less than one request per second each
    k, seconds, _ = budget.window()
    assert k == 1 and seconds >= 2.5


class Members:
    """An in-memory stand-in for store.upstream_members."""

    def __init__(self):
        self.seen: dict[str, float] = {}

    async def heartbeat(self, owner: str, now: float) -> None:
        self.seen[owner] = now

    async def count_active(self, since: float) -> int:
        return sum(1 for t in self.seen.values() if t >= since)

    async def leave(self, owner: str) -> None:
        self.seen.pop(owner, None)


@pytest.mark.gen_test(timeout=20)
async def test_processes_announce_themselves_and_share_the_quota():
    members = Members()
    first, second = UpstreamBudget(10, hold_first_window=False), UpstreamBudget(10, hold_first_window=False)
    stop_first, stop_second = asyncio.Event(), asyncio.Event()
    runs = [
        asyncio.ensure_future(first.run_membership(members, "a", stop_first, every=0.1)),
        asyncio.ensure_future(second.run_membership(members, "b", stop_second, every=0.1)),
    ]
    try:
        await asyncio.sleep(0)  # both have announced themselves
        # A joining process holds back until the others have seen it.
        async with second.slot("live") as waited:
            assert waited >= 0.1
        await asyncio.sleep(0.3)
        assert first.processes == second.processes == 2
        assert first.share + second.share == pytest.approx(10)
        stop_second.set()
        await runs[1]
        assert "b" not in members.seen  # it left, so the other takes the whole quota again
        await asyncio.sleep(0.3)
        assert first.processes == 1 and first.share == 10
    finally:
        stop_first.set()
        stop_second.set()
        await asyncio.gather(*runs)
