"""MongoDB access for statsapi: the only package that talks to the database."""

from store.client import create_client
from store.errors import DATABASE_ERRORS
from store.store import Store

__all__ = ["DATABASE_ERRORS", "Store", "create_client"]
