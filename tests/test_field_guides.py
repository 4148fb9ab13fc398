"""Each endpoint's field guide (catalogue `fields`) names exactly the properties its response schema has."""

from __future__ import annotations

import re

import pytest

from handlers.index import index_document
from handlers.schemas import schema_components
from server.contract.catalogue import CATALOGUE
from tests.helpers import make_config

GUIDED = [e for e in CATALOGUE if e.schema and e.fields]
PLACEHOLDER = re.compile(r"^<\w+>$")


@pytest.fixture(scope="module")
def components() -> dict:
    return schema_components(index_document(make_config()))


def resolve(schema: dict, components: dict) -> dict:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    for key in ("anyOf", "oneOf"):  # a nullable object: the object branch
        for branch in schema.get(key, []):
            branch = resolve(branch, components)
            if branch.get("properties") or branch.get("additionalProperties") or branch.get("items"):
                return branch
    return schema


def properties(schema: dict, components: dict) -> dict:
    schema = resolve(schema, components)
    if "items" in schema:
        schema = resolve(schema["items"], components)
    return schema.get("properties") or {}


def child(schema: dict, name: str, components: dict) -> dict | None:
    """The schema of `name` under `schema` (`<x>` names any key of a map), or None."""
    schema = resolve(schema, components)
    name = name.removesuffix("[]")
    if "items" in schema:
        schema = resolve(schema["items"], components)
    props = schema.get("properties") or {}
    if PLACEHOLDER.match(name):
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return extra
        patterns = list((schema.get("patternProperties") or {}).values())
        return patterns[0] if patterns else (next(iter(props.values())) if props else None)
    return props.get(name)


def guide_paths(key: str) -> list[list[str]]:
    """'a, b' -> [[a], [b]]; 'deltas.7d / 30d' -> [[deltas, 7d], [deltas, 30d]]."""
    out = []
    for part in key.split(", "):
        first, *alternatives = part.split(" / ")
        path = first.split(".")
        out.append(path)
        out += [path[:-1] + [alt] for alt in alternatives]
    return out


def data_schema(endpoint, components: dict) -> dict:
    schema = components[endpoint.schema]
    forms = [resolve(branch, components) for branch in schema.get("oneOf", [])]
    if len(forms) > 1 and all(form.get("properties") for form in forms):
        # An answer of several forms (/players: search or ids): its guide covers all of them.
        return {"properties": {name: sub for form in forms for name, sub in form["properties"].items()}}
    return schema


@pytest.mark.parametrize("endpoint", GUIDED, ids=[e.name for e in GUIDED])
def test_every_guide_entry_names_a_property_of_the_response(endpoint, components):
    schema = data_schema(endpoint, components)
    unknown = []
    for key in endpoint.fields:
        for path in guide_paths(key):
            node: dict | None = schema
            for name in path:
                node = child(node, name, components) if node is not None else None
            if node is None:
                unknown.append(".".join(path))
    assert not unknown, f"{endpoint.name}: field guide entries with no property in {endpoint.schema}: {unknown}"


@pytest.mark.parametrize("endpoint", GUIDED, ids=[e.name for e in GUIDED])
def test_every_property_of_the_response_is_in_its_guide(endpoint, components):
    named = {path[0].removesuffix("[]") for key in endpoint.fields for path in guide_paths(key)}
    top = set(properties(data_schema(endpoint, components), components))
    assert top, endpoint.schema
    missing = sorted(top - named)
    assert not missing, f"{endpoint.name}: properties of {endpoint.schema} its field guide does not describe: {missing}"
