"""Load-testing kit of scripts/bench.py and scripts.attacks: child processes, load generators, seeding, reports."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
EXPECTED_VALUES_FILE = os.path.join(SHARED_DATA, "wn8exp-2024-09-12.json")
