"""The envelope of every answer: the meta block, the error codes, the error and success envelopes."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    HOT_COPY_SECONDS,
)
from server.contract.catalogue.meta import STATUS
from server.contract.catalogue.shapes import (
    ISO,
    REGION_ENUM,
    obj,
    ref,
)
from server.contract.config import API_VERSION
from server.contract.errors import ERROR_CODES

# An endpoint's catalogue entry names its `data` schema (Endpoint.schema); each named schema also
# gets "<name>Envelope", the success envelope around it (envelope()).
SCHEMAS: dict[str, dict] = {
    "Meta": obj(
        {
            "source": {"type": "string", "description": "Name of the data source."},
            "version": {"type": "string", "const": API_VERSION, "description": "API version."},
            "generated": {
                **ISO,
                "description": "When this answer was built (ISO 8601, UTC, +00:00): a process replays a "
                f"built answer to the same path and query for up to {HOT_COPY_SECONDS:g} s "
                f"({STATUS.answer_seconds:g} s for /status) unless it writes its data meanwhile, so it "
                "may be that much older than the request.",
            },
            "attribution": {
                "type": "string",
                "description": "Credit text; please link to the site when you reuse the data.",
            },
        },
        description="Facts about the answer itself.",
    ),
    "ErrorCode": {
        "type": "string",
        "enum": list(ERROR_CODES),
        "description": "Every error code of the API (status and meaning in the index's `errors`).",
    },
    "Error": obj(
        {
            "code": ref("schemas", "ErrorCode"),
            "message": {"type": "string", "description": "Human-readable; may change, do not parse it."},
            "region": {**REGION_ENUM, "description": "The requested region (on `player_not_found`)."},
        },
        required=["code", "message"],
    ),
    "ErrorEnvelope": obj(
        {
            "success": {"type": "boolean", "const": False},
            "error": ref("schemas", "Error"),
        },
        description="An error: `success` is false and `error` stands in place of `data`; there is no `meta`.",
    ),
}


def envelope(schema: str) -> dict:
    """The success envelope around the `data` schema named `schema` ("<schema>Envelope")."""
    return obj(
        {
            "success": {"type": "boolean", "const": True},
            "meta": ref("schemas", "Meta"),
            "data": ref("schemas", schema),
        }
    )
