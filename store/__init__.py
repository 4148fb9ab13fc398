"""MongoDB access for statsapi: the only package that talks to the database."""

from store.client import DATABASE_ERRORS, create_client
from store.store import Store

__all__ = ["DATABASE_ERRORS", "Store", "create_client"]
