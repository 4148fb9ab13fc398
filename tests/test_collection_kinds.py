"""Every collection declares what it is worth (store/kinds.py): backups, restores and the
operators' guide all read that one declaration, so a collection without one must fail here."""

from __future__ import annotations

import pytest
from mongomock_motor import AsyncMongoMockClient

from store import Store
from store.kinds import Kind


def make_store() -> Store:
    return Store(AsyncMongoMockClient(), "kinds", capped=False)


def test_every_collection_has_exactly_one_declaration():
    store = make_store()
    declared = store.declarations()
    assert store.collection_names() == set(declared), "a collection without a declaration (or a stale one)"
    for name, declaration in declared.items():
        assert declaration.what.strip(), name
        assert isinstance(declaration.kind, Kind)


def test_what_a_backup_copies_is_the_data_no_upstream_can_give_again():
    irreplaceable = set(make_store().irreplaceable())
    # The history, the per-tank records, who is tracked, online samples, the population tables
    # and the versioned expected values exist only here.
    for name in (
        "snapshots",
        "tank_records",
        "tracked",
        "online_samples",
        "tank_changes",
        "tank_days",
        "expected_tables",
    ):
        assert name in irreplaceable
    # Profiles and clans come back from the upstream; claims and counters are minutes old.
    for name in ("players", "clans", "rate_counters", "leases", "tracker_slices", "online_minutes"):
        assert name not in irreplaceable


@pytest.mark.gen_test
async def test_each_walk_reads_an_indexed_field():
    """A backup reads day by day on a date field, or value by value on an integer field: each
    must be the first field of an index, or the walk would scan the collection per step."""
    store = make_store()
    await store.ensure_schema()
    for name, declaration in store.irreplaceable().items():
        kind, _, spec = declaration.walk.partition(":")
        assert kind in ("day", "each", "whole"), (name, declaration.walk)
        if kind == "whole":
            continue
        field = spec.split("=")[0]
        first_fields = {info["key"][0][0] for info in (await store.db[name].index_information()).values()}
        assert field in first_fields, (name, field, first_fields)


def test_the_operators_backup_table_is_the_declaration():
    """docs/deploy.md section 8 lists every collection with its declared kind, and nothing else."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = text[text.index("## 8. Backups") : text.index("## 9.")]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1]
    declared = {name: d.kind.value for name, d in make_store().declarations().items()}
    assert rows == declared
