"""scripts/attacks.py --quick runs every attack of issue 12 end to end; each leaves other clients answered.

No timing assertions: the figures are the script's report. What is asserted is what "Done means" of
issue 12 promises: during every attack the prober's cached-player requests were answered 200
(except while the database itself is the target, where 503 database_unavailable is the expected
answer), and live lookups of uncached accounts afterwards were admitted and answered.
About 2.5 minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTACKS = [
    "small",
    "flood",
    "simultaneous",
    "heavy_reads",
    "connections",
    "bodies",
    "kill_db",
    "sigstop_db",
    "retention",
]
DATABASE_ATTACKS = {"kill_db", "sigstop_db"}


def test_every_attack_leaves_the_service_answering(tmp_path):
    out = tmp_path / "attacks.json"
    command = [sys.executable, os.path.join(ROOT, "scripts", "attacks.py"), "--quick", "--json", str(out)]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=480)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    results = json.loads(out.read_text())
    print(run.stdout[-6000:])

    assert set(results["attacks"]) == set(ATTACKS)
    for name in ATTACKS:
        attack = results["attacks"][name]
        assert "error" not in attack, (name, attack.get("error"), attack.get("traceback"))
        prober = attack["prober"]
        assert prober["requests"] > 0, name
        allowed = {"503 database_unavailable"} if name in DATABASE_ATTACKS else set()
        assert set(prober["non_200_kinds"]) <= allowed, (name, prober)
        if name not in DATABASE_ATTACKS:
            assert prober["statuses"].get("200") == prober["requests"], (name, prober)
            after = attack["prober_after"]
            # Right after the connection attack the server can still be full of the attacker's
            # freshly opened connections (none has waited the 0.25 s that makes it sheddable):
            # a newcomer then reads a JSON 503 too_many_connections (never a reset). Seen once in
            # 605 probes of a full run; named in the closing note of issue 12.
            tolerated = {"503 too_many_connections"} if name == "connections" else set()
            assert set(after["non_200_kinds"]) <= tolerated and after["non_200"] <= 1, (name, after)
        live = attack["live"]
        assert live["attempted"] >= 3, (name, live)
        assert live["admitted"] == live["attempted"] and live["ok_200"] == live["attempted"], (name, live)

    attacks = results["attacks"]
    assert attacks["flood"]["requests"] >= 8000 and set(attacks["flood"]["statuses"]) == {"2xx"}
    assert attacks["simultaneous"]["admitted"] == 30, attacks["simultaneous"]
    assert all(1 <= s <= 60 for s in attacks["simultaneous"]["retry_after_s"]), attacks["simultaneous"]
    assert all(check["ok"] for check in attacks["small"]["checks"].values()), attacks["small"]["checks"]
    assert attacks["bodies"]["answers"] == {"413 payload_too_large": 8}, attacks["bodies"]
    assert attacks["connections"]["service_fd_limit"] == {"soft": 1024, "hard": 1024}
    # The database attacks: data endpoints answered 503 meanwhile, then 200 again without a restart.
    kill = attacks["kill_db"]
    assert kill["service_pid_unchanged_and_running"] and kill["back_to_200_after_s"] is not None, kill
    assert kill["embedded_database_at_end"]["restarts"] >= 1 and all(kill["player_data_unchanged"].values()), kill
    assert attacks["sigstop_db"]["steady_200_after_sigcont_s"] is not None, attacks["sigstop_db"]
    for round_ in attacks["retention"]["rounds"]:
        assert round_["left"] == {"snapshots": 0, "online_samples": 0}, round_
    assert results["main_service_at_end"]["running"]
