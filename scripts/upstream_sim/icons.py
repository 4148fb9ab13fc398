"""The encyclopedia's vehicle icons, drawn by the simulator (small PNGs at URLs of its own), so a
page that shows them loads offline as it would online."""

from __future__ import annotations

import functools
import struct
import zlib

# The vehicle records name their icons under this placeholder origin; the HTTP layer puts the
# origin the request reached in its place (api.py), as the real API names its own static host.
ORIGIN = "http://upstream-sim.invalid"
PATH = "/_sim/icons/vehicle"
SIZES = {"small": (124, 31), "contour": (80, 24), "big": (160, 100)}  # the real icons' pixels
_TYPE_RGB = {
    "lightTank": (86, 160, 72),
    "mediumTank": (214, 160, 40),
    "heavyTank": (190, 70, 60),
    "AT-SPG": (60, 120, 190),
    "SPG": (130, 90, 170),
}


def url(size: str, tank_id: int) -> str:
    return f"{ORIGIN}{PATH}/{size}/{tank_id}.png"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


@functools.lru_cache(maxsize=512)
def png(size: str, vehicle_type: str, nation: str, tier: int) -> bytes:
    """A transparent picture of the vehicle's type colour: a hull, a turret and a gun whose length
    grows with the tier, and a stripe of the nation's shade (deterministic, a few hundred bytes)."""
    width, height = SIZES[size]
    r, g, b = _TYPE_RGB.get(vehicle_type, (128, 128, 128))
    shade = 40 + zlib.crc32(nation.encode()) % 160
    hull_top, hull_bottom = height // 2, height - max(2, height // 8)
    turret_left, turret_right = width // 3, width // 3 + width // 4
    gun_row = hull_top - max(1, height // 6)
    gun_end = min(width - 1, turret_right + (width // 3) * tier // 11)
    rows = []
    for y in range(height):
        row = bytearray([0])  # filter: none
        for x in range(width):
            inside = (
                (hull_top <= y < hull_bottom and width // 10 <= x < width - width // 10)
                or (height // 4 <= y < hull_top and turret_left <= x < turret_right)
                or (y == gun_row and turret_right <= x <= gun_end)
            )
            if inside and y == hull_bottom - 1:
                row += bytes((shade, shade, shade, 255))
            elif inside:
                row += bytes((r, g, b, 255))
            else:
                row += bytes(4)
        rows.append(bytes(row))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + _chunk(b"IEND", b"")
    )


def vehicle_png(size: str, vehicle: dict) -> bytes:
    return png(size, vehicle.get("type") or "", vehicle.get("nation") or "", int(vehicle.get("tier") or 1))
