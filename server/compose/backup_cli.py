"""`python -m server backup --to DIR` and `python -m server restore --from DIR` (docs/deploy.md section 8)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from server.compose.embedded_db import EmbeddedDatabase, running_uri
from server.contract.config import VERSION
from store import Store, create_client
from store.backup import BackupError, read_manifest, restore_backup, write_backup

if TYPE_CHECKING:
    from server.contract.config import Config


@contextlib.contextmanager
def database_uri(config: Config) -> Iterator[str]:
    """The database the command works on: --mongodb-uri; else the embedded database of the data
    directory — the one a running server owns (its address is recorded there; its files are never
    opened by this process), or, with no server running, one this command starts and stops."""
    if config.mongodb_uri:
        yield config.mongodb_uri
        return
    storage = os.path.join(config.data_dir, "db")
    uri = running_uri(storage)
    if uri is not None:
        print(f"using the database of the server running on {config.data_dir}: {uri}", file=sys.stderr)
        yield uri
        return
    database = EmbeddedDatabase(storage).start()
    try:
        yield database.uri
    finally:
        database.stop()


def open_store(config: Config, uri: str) -> Store:
    client = create_client(uri)
    # As the server builds it (server/compose/bootstrap.py): the same collections and expiry indexes.
    return Store(
        client,
        config.db_name,
        rate_collection_bytes=config.rate_collection_mb << 20,
        capped=config.capped_rate_counters,
        ttl_indexes=not config.embedded_database,
    )


async def run_backup(config: Config, uri: str, target: str) -> dict:
    store = open_store(config, uri)
    try:
        return await write_backup(store, target, writer=f"statsapi {VERSION}", duty=config.backup_duty)
    finally:
        store.client.close()


async def run_restore(config: Config, uri: str, source: str, force: bool) -> dict:
    store = open_store(config, uri)
    try:
        return await restore_backup(store, source, force=force, log=lambda line: print(line, file=sys.stderr))
    finally:
        store.client.close()


def _command(
    name: str, option: str, directory: str | None, work: Callable[[str], dict], summary: Callable[[dict], str]
) -> int:
    """`statsapi name`: 2 when its `option` (the `directory`) was not given, 1 when `work(directory)`
    raises a BackupError (said on stderr), else 0 after printing `summary` of what it returned."""
    if not directory:
        print(f"statsapi {name}: {option} is required", file=sys.stderr)
        return 2
    try:
        result = work(directory)
    except BackupError as exc:
        print(f"statsapi {name}: {exc}", file=sys.stderr)
        return 1
    print(summary(result))
    return 0


def backup_main(config: Config, target: str | None) -> int:
    def backup(target: str) -> dict:
        with database_uri(config) as uri:
            return asyncio.run(run_backup(config, uri, target))

    def summary(manifest: dict) -> str:
        return (
            f"backed up {manifest['documents']:,} documents of {len(manifest['collections'])} collections "
            f"({manifest['bytes'] / 1e6:.1f} MB) in {manifest['seconds']:.1f} s to {os.path.abspath(str(target))}; "
            f"every UTC day through {manifest['complete_days_through']} is complete"
        )

    return _command("backup", "--to DIR", target, backup, summary)


def restore_main(config: Config, source: str | None, force: bool) -> int:
    def restore(source: str) -> dict:
        read_manifest(source, verify=False)  # not a backup at all: say so before starting anything
        with database_uri(config) as uri:
            return asyncio.run(run_restore(config, uri, source, force))

    def summary(report: dict) -> str:
        return (
            f"restored {report['documents']:,} documents of {len(report['restored'])} collections in "
            f"{report['seconds']:.1f} s; every UTC day through {report['complete_days_through']} is complete. "
            "Start the service (python -m server) to serve them."
        )

    return _command("restore", "--from DIR", source, restore, summary)
