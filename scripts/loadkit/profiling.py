"""Profiling the process under test with py-spy: self and inclusive shares of the event-loop thread."""

from __future__ import annotations

import collections
import os
import re
import shutil
import sys

from . import ROOT


def find_py_spy(explicit: str | None) -> str | None:
    if explicit:
        return explicit if os.path.exists(explicit) else None
    found = shutil.which("py-spy")
    if found:
        return found
    candidate = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return candidate if os.path.exists(candidate) else None


_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _short_file(path: str) -> str:
    path = path.replace("\\", "/")
    if path.startswith(ROOT + "/"):
        return path[len(ROOT) + 1 :]
    for marker in ("/site-packages/", "/lib/python3"):
        at = path.find(marker)
        if at >= 0:
            rest = path[at + len(marker) :]
            return rest.split("/", 1)[1] if marker == "/lib/python3" and "/" in rest else rest
    return path


def _frame_name(frame: str) -> str:
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    return f"{match.group('func')} ({_short_file(match.group('file'))})"


PY_SPY_RATE = 200
LOOP_FRAME = "._run_once (asyncio/base_events.py)"  # BaseEventLoop._run_once: the event-loop thread

# The costs worth naming, whether or not they make the top lists (inclusive shares).
WATCHED_FRAMES = [
    ("rate limiter: RateLimiter.hit", "RateLimiter.hit (server/serving/ratelimit.py)"),
    ("rate limiter: Decision.headers", "Decision.headers (server/serving/ratelimit.py)"),
    ("rate limiter: flush (bulk $inc + read back)", "RateLimiter.flush (server/serving/ratelimit.py)"),
    ("client address: resolve_client_ip", "resolve_client_ip (handlers/base.py)"),
    ("envelope: BaseHandler.respond", "BaseHandler.respond (handlers/base.py)"),
    ("meta.generated: utc_now_iso", "utc_now_iso (handlers/base.py)"),
    ("headers: BaseHandler.set_default_headers", "BaseHandler.set_default_headers (handlers/base.py)"),
    ("errors: BaseHandler.write_error", "BaseHandler.write_error (handlers/base.py)"),
    ("errors: RequestHandler.send_error (tornado)", "RequestHandler.send_error (tornado/web.py)"),
    ("access log: log_request", "log_request (server/compose/app.py)"),
    ("logging: StreamHandler.emit", "StreamHandler.emit (logging/__init__.py)"),
    ("player service: PlayerService.profile", "PlayerService.profile (server/services/players.py)"),
    ("tornado: RequestHandler.finish", "RequestHandler.finish (tornado/web.py)"),
    ("tornado: RequestHandler.__init__", "RequestHandler.__init__ (tornado/web.py)"),
    ("tornado: routing (find_handler)", "RuleRouter.find_handler (tornado/routing.py)"),
    ("tornado: Date header (format_datetime)", "format_datetime (email/utils.py)"),
    ("JSON error stream wrapper (server/compose/http.py)", "_JSONRejectingStream.write (server/compose/http.py)"),
]


def summarize_profile(raw_path: str, rate: int, seconds: float, top: int = 15) -> dict:
    """Self and inclusive shares per function of the event-loop thread, from py-spy's raw output.

    Other threads (pymongo's monitors and motor's executor) are counted apart: they do not
    serve requests, and py-spy's idle detection misses their blocking socket reads.
    """
    self_counts: collections.Counter = collections.Counter()
    incl_counts: collections.Counter = collections.Counter()
    loop = other = 0
    with open(raw_path) as handle:
        for line in handle:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            try:
                n = int(count)
            except ValueError:
                continue
            frames = [_frame_name(f) for f in stack.split(";") if f]
            frames = [f for f in frames if not f.startswith(("process ", "thread "))]
            if not frames:
                continue
            if not any(f.endswith(LOOP_FRAME) for f in frames):
                other += n
                continue
            loop += n
            self_counts[frames[-1]] += n
            for name in set(frames):
                incl_counts[name] += n
    if not loop:
        return {"samples": 0, "other_thread_samples": other}

    def share(items):
        return [{"frame": k, "percent": round(100.0 * v / loop, 1)} for k, v in items]

    project = [
        (k, v)
        for k, v in incl_counts.most_common()
        if any(f"({p}/" in k for p in ("server", "handlers", "store")) and "server/compose/entry.py" not in k
    ]
    return {
        "samples": loop,
        "other_thread_samples": other,
        "loop_busy_percent": round(100.0 * loop / (rate * seconds), 1),
        "top_self": share(self_counts.most_common(top)),
        "project_inclusive": share(project[:top]),
        "named_costs": [
            {"cost": label, "frame": frame, "percent": round(100.0 * incl_counts[frame] / loop, 1)}
            for label, frame in WATCHED_FRAMES
            if frame in incl_counts
        ],
    }
