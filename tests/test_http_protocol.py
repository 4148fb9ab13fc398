"""What Tornado rejects before any handler runs still answers enveloped JSON."""

from __future__ import annotations

import asyncio

import pytest
import ujson

from server.compose.bootstrap import make_http_server
from tests.helpers import build_app, free_port


@pytest.fixture
def raw_server(io_loop, mongo_uri, db_name, upstream_sim):
    app = build_app(io_loop, mongo_uri, db_name, upstream_base_url=upstream_sim)
    port = free_port()
    server = make_http_server(app, app.settings["config"])
    server.listen(port, "127.0.0.1")
    yield port
    server.stop()


async def exchange(port: int, raw: bytes) -> tuple[int, dict, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return status, headers, body


def assert_json_error(headers, body, code):
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["access-control-allow-origin"] == "*"
    assert "cache-control" in headers
    parsed = ujson.loads(body)
    assert parsed["success"] is False and parsed["error"]["code"] == code


@pytest.mark.gen_test(timeout=20)
async def test_malformed_request_line_is_json_400(raw_server):
    status, headers, body = await exchange(raw_server, b"GARBAGE\r\n\r\n")
    assert status == 400
    assert_json_error(headers, body, "bad_request")


@pytest.mark.gen_test(timeout=20)
async def test_bad_host_header_is_json_400(raw_server):
    status, headers, body = await exchange(raw_server, b"GET /api/v1 HTTP/1.1\r\nHost: bad host/\r\n\r\n")
    assert status == 400
    assert_json_error(headers, body, "bad_request")


@pytest.mark.gen_test(timeout=20)
async def test_over_long_header_is_json_431(raw_server):
    raw = b"GET /api/v1 HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 40_000 + b"\r\n\r\n"
    status, headers, body = await exchange(raw_server, raw)
    assert status == 431
    assert_json_error(headers, body, "request_too_large")


@pytest.mark.gen_test(timeout=20)
async def test_server_still_serves_after_rejections(raw_server):
    await exchange(raw_server, b"GARBAGE\r\n\r\n")
    status, headers, body = await exchange(
        raw_server, b"GET /api/v1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    assert status == 200
    assert ujson.loads(body)["success"] is True


@pytest.mark.gen_test(timeout=20)
async def test_body_over_limit_is_json_413_before_reading_it(raw_server):
    raw = b"GET /api/v1 HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n" + b"x" * 100_000
    status, headers, body = await exchange(raw_server, raw)
    assert status == 413
    assert_json_error(headers, body, "payload_too_large")


@pytest.mark.gen_test(timeout=20)
async def test_oversized_heads_are_json_431(raw_server):
    for raw in (
        b"GET /api/v1 HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
        b"GET /api/v1 HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(10_000)) + b"\r\n",
        b"GET /api/v1?" + b"&".join(b"p%d=1" % i for i in range(10_000)) + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /api/v1 HTTP/1.1\r\n" + b"A: b\r\n" * 150 + b"\r\n",  # small, but over 100 lines
    ):
        status, headers, body = await exchange(raw_server, raw)
        assert status == 431, raw[:80]
        assert_json_error(headers, body, "request_too_large")


@pytest.mark.gen_test(timeout=20)
async def test_keep_alive_pipelining_and_small_bodies_still_work(raw_server):
    one = b"GET /api/v1 HTTP/1.1\r\nHost: x\r\n\r\n"
    with_body = b"GET /api/v1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
    last = b"GET /api/v1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    reader, writer = await asyncio.open_connection("127.0.0.1", raw_server)
    writer.write(one + with_body + last)  # pipelined: bytes past each head are given back
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert data.count(b"HTTP/1.1 200 OK") == 3, data[:500]


@pytest.mark.gen_test(timeout=20)
async def test_static_range_past_the_end_is_json_and_not_cached(raw_server):
    raw = b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999-\r\nConnection: close\r\n\r\n"
    status, headers, body = await exchange(raw_server, raw)
    assert status == 416
    assert headers["cache-control"] == "public, max-age=0, no-store"
    assert headers["content-range"].startswith("bytes */")
    assert_json_error(headers, body, "range_not_satisfiable")


@pytest.mark.gen_test(timeout=20)
async def test_site_options_has_cache_control(raw_server):
    status, headers, _ = await exchange(raw_server, b"OPTIONS / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 204 and headers["cache-control"] == "public, max-age=300"
