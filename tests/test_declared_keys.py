"""Every key of every answer is declared in its response schema: tools, generated clients and
assistants read the schemas, and a client generated from the document drops a key it does not
declare. On the demo (check_keys_declared_on_demo, run by tests/test_marks.py on the demo it seeds)
every read operation is asked its catalogue example and each value of each of its enumerated query
parameters, and each answer is checked key by key (and validated against the document).
"""

from __future__ import annotations

import json
import re
import urllib.parse

import ujson
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from server.contract.catalogue import CATALOGUE, PREFIX, Endpoint
from server.mcp.tools import FORMAT_PARAM, resolve
from tests.test_openapi import DOC_URI, Contract


class Declarations:
    """Walks an answer beside its schema and names each key the schema does not declare: not among
    an object's `properties` (or `patternProperties`), where no `additionalProperties` schema makes
    the object a map whose every key is declared."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.registry = Registry().with_resource(DOC_URI, Resource.from_contents(doc, DRAFT202012))

    def matches(self, schema: dict, instance) -> bool:
        # The branch's local $refs point into the document: made absolute, the registry resolves them.
        absolute = json.loads(json.dumps(schema).replace('"#/', f'"{DOC_URI}#/'))
        return Draft202012Validator(absolute, registry=self.registry).is_valid(instance)

    def undeclared(self, schema: dict, instance, where: str = "") -> list[str]:
        schema = resolve(self.doc, schema)
        found: list[str] = []
        for part in schema.get("allOf", ()):
            found += self.undeclared(part, instance, where)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                branches = [b for b in schema[key] if self.matches(resolve(self.doc, b), instance)]
                if not branches:
                    return [f"{where or '.'}: matches no branch of its {key}"]
                found += self.undeclared(branches[0], instance, where)
        if isinstance(instance, dict):
            properties = schema.get("properties") or {}
            patterns = schema.get("patternProperties") or {}
            extra = schema.get("additionalProperties")
            if not properties and not patterns and not isinstance(extra, dict) and schema.get("allOf"):
                return found  # an allOf's parts declare the keys (checked above)
            for key, value in instance.items():
                path = f"{where}.{key}" if where else key
                if key in properties:
                    found += self.undeclared(properties[key], value, path)
                elif any(re.search(pattern, key) for pattern in patterns):
                    pattern = next(p for p in patterns if re.search(p, key))
                    found += self.undeclared(patterns[pattern], value, path)
                elif isinstance(extra, dict) and extra:
                    found += self.undeclared(extra, value, f"{where}.<{key}>" if where else f"<{key}>")
                elif not any(k in schema for k in ("oneOf", "anyOf", "allOf")):
                    found.append(path)
        elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
            for item in instance:
                found += self.undeclared(schema["items"], item, where + "[]")
        return sorted(set(found))


def requests_of(endpoint: Endpoint) -> list[str]:
    """The example request, and one per value of each enumerated query parameter (the others as in
    the example): the shapes an endpoint answers (group_by=tier, source=computed, by=wtr, ...)."""
    path, _, query = endpoint.example.partition("?")
    example = dict(urllib.parse.parse_qsl(query))
    out = [endpoint.example]
    for param in endpoint.params:
        if param.location != "query" or param.enum is None or param.name == FORMAT_PARAM:
            continue
        for value in param.enum:
            asked = {**example, param.name: str(value)}
            if param.name == "region" and value != "eu":
                continue  # the demo holds eu (tests/test_marks.py EuOnly): another region answers the same shapes emptier
            out.append(path + "?" + urllib.parse.urlencode(asked))
    return list(dict.fromkeys(out))


def read_endpoints() -> list[Endpoint]:
    return [e for e in CATALOGUE if e.schema is not None and e.media_type == "application/json"]


async def check_keys_declared_on_demo(base_url: str) -> None:
    client = AsyncHTTPClient()

    async def get(path: str):
        return await client.fetch(HTTPRequest(base_url + path, request_timeout=60), raise_error=False)

    doc = ujson.loads((await get(PREFIX + "/openapi.json")).body)
    contract, declarations = Contract(doc), Declarations(doc)
    problems: list[str] = []
    for endpoint in read_endpoints():
        answered = 0
        for request in requests_of(endpoint):
            response = await get(PREFIX + request)
            if response.code != 200:
                continue
            answered += 1
            url_path = PREFIX + request.partition("?")[0]
            template = contract.template_of(url_path)
            documented, pointer = contract.response(template, "GET", 200)
            contract.validate_body(documented, pointer, response.body)
            schema = documented["content"]["application/json"]["schema"]
            problems += [f"{request}: {key}" for key in declarations.undeclared(schema, ujson.loads(response.body))]
        assert answered, f"{endpoint.name}: no request answered 200 on the demo: the check would prove nothing"
    assert not problems, "keys the response schemas do not declare:\n" + "\n".join(problems)


def test_an_undeclared_key_is_found_wherever_it_is():
    """The walker follows $refs, oneOf branches, arrays and maps, and names the key a schema lacks."""
    doc = {
        "components": {
            "schemas": {
                "Row": {"type": "object", "properties": {"a": {"type": "integer"}}},
                "Answer": {
                    "type": "object",
                    "properties": {
                        "rows": {"type": "array", "items": {"$ref": "#/components/schemas/Row"}},
                        "by_realm": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/Row"}},
                        "maybe": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Row"}]},
                        "loose": {"type": "object", "required": ["x"]},
                    },
                },
            }
        }
    }
    walker = Declarations(doc)
    schema = {"$ref": "#/components/schemas/Answer"}
    good = {"rows": [{"a": 1}], "by_realm": {"eu": {"a": 2}}, "maybe": None}
    assert walker.undeclared(schema, good) == []
    bad = {
        "rows": [{"a": 1}, {"a": 1, "b": 2}],
        "by_realm": {"eu": {"a": 2, "c": 3}},
        "maybe": {"a": 1, "d": 4},
        "loose": {"x": 1},
        "e": 5,
    }
    assert walker.undeclared(schema, bad) == ["by_realm.<eu>.c", "e", "loose.x", "maybe.d", "rows[].b"]
