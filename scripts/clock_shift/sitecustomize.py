"""Moves `time.time` (and what reads it) of every Python process started with this directory on
PYTHONPATH by STATSAPI_CLOCK_SHIFT seconds: the tests, the service, the simulators, SecantusDB.

Used by scripts/test_at.sh to run a test at a chosen time of day. `datetime.now` and the monotonic
clock are not moved (a C type cannot be patched): the shift is only ever forward, so SecantusDB's
TTL monitor, which reads `datetime.now`, never expires a document before its shifted time.
"""

import os
import time

_SHIFT = float(os.environ.get("STATSAPI_CLOCK_SHIFT") or 0)

if _SHIFT:
    _real_time, _real_time_ns = time.time, time.time_ns
    _real_gmtime, _real_localtime, _real_strftime, _real_ctime = time.gmtime, time.localtime, time.strftime, time.ctime

    def _time() -> float:
        return _real_time() + _SHIFT

    def _time_ns() -> int:
        return _real_time_ns() + int(_SHIFT * 1e9)

    def _gmtime(seconds=None):
        return _real_gmtime(_time() if seconds is None else seconds)

    def _localtime(seconds=None):
        return _real_localtime(_time() if seconds is None else seconds)

    def _strftime(fmt, t=None):
        return _real_strftime(fmt, _localtime() if t is None else t)

    def _ctime(seconds=None):
        return _real_ctime(_time() if seconds is None else seconds)

    time.time, time.time_ns = _time, _time_ns  # type: ignore[assignment]
    time.gmtime, time.localtime, time.strftime, time.ctime = _gmtime, _localtime, _strftime, _ctime  # type: ignore[assignment]
