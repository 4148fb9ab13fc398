"""The vehicle catalogue (/vehicles) and the tanks' strength with their drivers' skill taken out (/tanks/strength)."""

from __future__ import annotations

from server.contract.catalogue.figures import (
    HOT_COPY_SECONDS,
    POPULATION_MIN_PLAYERS,
    STRENGTH_METHOD,
    STRENGTH_MIN_BATTLES,
    STRENGTH_MIN_OTHER_BATTLES,
    STRENGTH_MIN_PLAYERS,
    TANK_PAGE_MAX,
    VEHICLE_HEADLINE_DAYS,
    VEHICLES_PAGE_MAX,
)
from server.contract.catalogue.marks import MARK_VALUES
from server.contract.catalogue.model import CsvTable, Endpoint, Param
from server.contract.catalogue.params import (
    POPULATION,
    POPULATION_GUIDE,
    REGION_QUERY,
    TANK_FILTERS,
    TANK_PAGING,
    paging,
)
from server.contract.catalogue.shapes import DATE, REGION_ENUM, TANK_NAMES, UNIX, array, nullable, obj
from server.contract.catalogue.tanks import (
    CATALOGUE_FIELDS,
    CATALOGUE_GUIDE,
    PERIOD_HEAD,
    STRENGTH_CSV,
    STRENGTH_FIGURES,
    STRENGTH_GUIDE,
    period_param,
)

PAGING = paging("Vehicles", VEHICLES_PAGE_MAX, VEHICLES_PAGE_MAX, 10_000)
VEHICLES = Endpoint(
    name="vehicles",
    path="/vehicles",
    summary="The vehicle catalogue of a region: names, tiers, types, nations, premium flags and icons",
    description="Every vehicle of the region's encyclopedia (wot/encyclopedia/vehicles: name, short name, "
    "tier, type, nation, tag, the premium, gift and wheeled flags and Wargaming's icon URLs), with no key "
    "of your own. Fetched once a day per region; when a fetch fails the last good catalogue is served, "
    "with the date of its fetch (fetched_on) and stale true once it is more than a day old. A tank the "
    "tracked players drove that the encyclopedia lacks is listed too, with nulls and in_encyclopedia "
    f"false. Each vehicle links to its tank page and carries its {VEHICLE_HEADLINE_DAYS}-day figures over "
    "the tracked players where they drove it, and Wargaming's published mark thresholds where they exist. "
    "In tank_id order; filter by tier, type, nation, premium and a part of the name; page with limit and "
    "offset. 503 upstream_unavailable before the first fetch of the region succeeded.",
    tag="tanks",
    operation_id="Vehicles",
    limit_per_minute=30,
    cache_max_age=3600,
    answer_seconds=HOT_COPY_SECONDS,
    example="/vehicles?region=eu&tier=10&type=heavyTank",
    params=(
        REGION_QUERY,
        *TANK_FILTERS,
        Param(
            "premium",
            "query",
            "string",
            "invalid_premium",
            "true: premium vehicles only; false: the others.",
            enum=("true", "false"),
        ),
        Param(
            "search",
            "query",
            "string",
            "invalid_vehicle_search",
            "Only vehicles whose name or short name contains this text (case-insensitive), 1 to 40 characters.",
            min_length=1,
            max_length=40,
            pattern=r"^[^\x00-\x1f\x7f]+$",
            example="Tiger",
        ),
        *PAGING,
    ),
    errors=("upstream_unavailable", "database_unavailable"),
    schema="Vehicles",
    csv=CsvTable(
        "vehicles",
        "vehicles-{region}",
        (
            "tank_id",
            "name",
            "tier",
            "type",
            "nation",
            "short_name",
            "tag",
            "is_premium",
            "is_gift",
            "is_wheeled",
            "images.small_icon",
            "images.contour_icon",
            "images.big_icon",
            "in_encyclopedia",
            "page",
            "stats.players",
            "stats.battles",
            "stats.win_rate",
            "stats.avg_damage",
            "official_marks.first",
            "official_marks.second",
            "official_marks.third",
            "official_marks.top",
        ),
    ),
    fields={
        "region": "the region",
        "fetched_at, fetched_on": "unix time and UTC day of the encyclopedia fetch the catalogue is from",
        "stale": "true when that fetch is more than a day and an hour old (the daily refreshes failed since)",
        "headline_days": "the period of each vehicle's stats",
        "total, offset, limit": "how many vehicles match the filters, the page",
        "vehicles[]": "tank_id, name, tier, type, nation, "
        f"{CATALOGUE_GUIDE}; page: the path of its tank page (GET /tank/{{tank_id}}/{{region}}); stats "
        f"{{players, battles, win_rate, avg_damage}} over the tracked players in the last {VEHICLE_HEADLINE_DAYS} "
        f"days (null when none drove it; win_rate and avg_damage null below {POPULATION_MIN_PLAYERS} players); "
        "official_marks {first, second, third, top}: Wargaming's published mark thresholds (null where it "
        "publishes none)",
    },
)
TANK_STRENGTH = Endpoint(
    name="tank_strength",
    path="/tanks/strength",
    summary="A tier list: tanks ranked by their win rate with their drivers' skill taken out",
    description="The tanks of a region (over its random panel by default where it has one, else the tracked accounts: "
    "the population parameter) ranked by relative win rate: the tank's win rate minus what the "
    "same players achieved on their other tanks of the tier in the period (battle-weighted), with a 95 % "
    "interval, and the relative damage the same way, each with its sample; tanks below the sample follow, "
    f"unranked. The method, its assumptions and its check are in {STRENGTH_METHOD}. Built daily with the "
    "tank statistics, without any request to the game API. Filter by tier (a tier list), type and nation; "
    "page with limit and offset. 404 no_statistics until the first build.",
    tag="tanks",
    operation_id="TankStrength",
    limit_per_minute=30,
    cache_max_age=300,
    answer_seconds=HOT_COPY_SECONDS,
    example="/tanks/strength?region=eu&tier=10&days=30",
    params=(
        REGION_QUERY,
        period_param(),
        POPULATION,
        *TANK_FILTERS,
        *TANK_PAGING[1:],  # limit and offset: the order is the ranking's
    ),
    errors=("no_statistics", "database_unavailable"),
    schema="TankStrength",
    csv=CsvTable(
        "tanks",
        "tank-strength-{region}-{days}d",
        ("rank", "tank_id", "name", "tier", "type", "nation", *STRENGTH_CSV),
    ),
    fields={
        "region, days, from, through": "the region and the period: its first and last UTC day",
        "built_at": "unix time the tables were built",
        "population, population_kind, panel_size": POPULATION_GUIDE,
        "method": "where the method is written down",
        "min_players, min_battles, min_other_battles": f"the sample's floors: a figure is null below min_players "
        f"({STRENGTH_MIN_PLAYERS}) players or min_battles ({STRENGTH_MIN_BATTLES}) battles; a player counts with "
        f"at least min_other_battles ({STRENGTH_MIN_OTHER_BATTLES}) battles on the tier's other tanks",
        "ranked, total, offset, limit": "tanks ranked, tanks matching the filters, the page",
        "tanks[]": "rank (by relative_win_rate, 1 the strongest; null below the sample), tank_id, name, tier, "
        f"type, nation, relative_win_rate, relative_win_rate_interval, win_rate, baseline_win_rate, "
        f"relative_damage, relative_damage_interval, avg_damage, baseline_damage, players, battles: {STRENGTH_GUIDE}",
    },
)

# The `data` schemas of this module's endpoints (components/schemas), by their `schema` names.
SCHEMAS: dict[str, dict] = {
    "Vehicles": obj(
        {
            "region": REGION_ENUM,
            "fetched_at": UNIX,
            "fetched_on": DATE,
            "stale": {"type": "boolean"},
            "headline_days": {"type": "integer", "minimum": 1},
            "total": {"type": "integer", "minimum": 0, "description": "Vehicles matching the filters."},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": VEHICLES_PAGE_MAX},
            "vehicles": array(
                obj(
                    {
                        "tank_id": {"type": "integer", "minimum": 1},
                        **TANK_NAMES,
                        **CATALOGUE_FIELDS,
                        "page": {"type": "string", "description": "The path of the tank's page."},
                        "stats": {
                            "oneOf": [
                                obj(
                                    {
                                        "players": {"type": "integer", "minimum": 1},
                                        "battles": {"type": "integer", "minimum": 0},
                                        "win_rate": nullable("number"),
                                        "avg_damage": nullable("number"),
                                    }
                                ),
                                {"type": "null"},
                            ],
                            "description": "The tracked players' figures on it; null when none drove it.",
                        },
                        "official_marks": {
                            "oneOf": [MARK_VALUES, {"type": "null"}],
                            "description": "Wargaming's published mark thresholds; null where it publishes none.",
                        },
                    }
                ),
                maxItems=VEHICLES_PAGE_MAX,
            ),
        }
    ),
    "TankStrength": obj(
        {
            **PERIOD_HEAD,
            "method": {"type": "string"},
            "min_players": {"type": "integer", "minimum": 1},
            "min_battles": {"type": "integer", "minimum": 1},
            "min_other_battles": {"type": "integer", "minimum": 1},
            "ranked": {"type": "integer", "minimum": 0},
            "total": {"type": "integer", "minimum": 0},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": TANK_PAGE_MAX},
            "tanks": array(
                obj(
                    {
                        "rank": nullable("integer", minimum=1),
                        "tank_id": {"type": "integer", "minimum": 1},
                        **TANK_NAMES,
                        **STRENGTH_FIGURES,
                    }
                ),
                maxItems=TANK_PAGE_MAX,
            ),
        }
    ),
}

# This module's endpoints in the order the index and the OpenAPI document list them
# (server/contract/catalogue/__init__.py CATALOGUE).
ENDPOINTS: tuple[Endpoint, ...] = (
    TANK_STRENGTH,
    VEHICLES,
)
