"""Response schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses them) of every endpoint's `data`, by name.

Each schema is written beside its endpoint's catalogue entry, in the SCHEMAS of the contract module
of its tag (server/contract/catalogue/<module>.py); this module only assembles components/schemas.
"""

from __future__ import annotations

import copy

from server.contract import catalogue
from server.contract.catalogue import CATALOGUE, envelope, meta
from server.contract.catalogue.shapes import ref

__all__ = ["ref", "schema_components"]

# The modules' schemas in the order components/schemas lists them (the OpenAPI document's bytes
# depend on it); an endpoint's new schema goes into its module's SCHEMAS, after that module's others.
BEFORE_INDEX = (
    envelope,
    catalogue.profile,
    catalogue.history,
    catalogue.tanks,
    catalogue.marks,
    catalogue.vehicles,
    catalogue.rankings,
    catalogue.expected,
    catalogue.players,
    catalogue.dumps,
    catalogue.clans,
    catalogue.online,
    meta,
)
AFTER_INDEX = (catalogue.sessions, catalogue.roster)


def schema_components(index: dict) -> dict:
    """components/schemas; `index` is the index document (the Index schema names its keys)."""
    schemas: dict = {}
    for module in BEFORE_INDEX:
        schemas.update(module.SCHEMAS)
    schemas["Index"] = meta.index_schema(index, (endpoint.name for endpoint in CATALOGUE))
    for module in AFTER_INDEX:
        schemas.update(module.SCHEMAS)
    # A fresh copy for every caller: the modules' schemas are built once, at import.
    schemas = copy.deepcopy(schemas)
    for endpoint in CATALOGUE:
        if endpoint.schema is not None:
            schemas[endpoint.schema + "Envelope"] = envelope.envelope(endpoint.schema)
    return schemas
