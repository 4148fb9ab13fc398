"""Offline stand-in for the Wargaming public API (URL scheme, methods and control endpoints: see api.py)."""
from .api import (
    METHODS,
    ApiError,
    SimState,
    apply_fields,
    error_body,
    make_app,
    parse_ids,
)
from .cli import main
from .clock import SimClock
from .faults import FAULT_MODES, Faults
from .ids import (
    BLOCK,
    DAY,
    DEFAULT_VEHICLES,
    GAMES,
    MAX_IDS,
    MAX_STRONGHOLD_IDS,
    MAX_VEHICLE_PAGE,
    REGION_RANGES,
    REGIONS,
    SUM_FIELDS,
    account_created_at,
    account_exists,
    clan_active,
    clan_exists,
    clan_members,
    clan_of_account,
    clan_state,
    disbanded_clans,
    existing_accounts,
    existing_clans,
    is_veteran,
    missing_accounts,
    missing_clans,
    nickname,
    veteran_accounts,
)
from .limits import Counters, RateLimiter
from .profile import ACCOUNT_BLOCKS, BLOCK_FIELDS, TANK_BLOCKS, Profile
from .vehicles import (
    encyclopedia_record,
    generated_expectation,
    generated_vehicles,
    load_vehicles,
)
from .world import World

__all__ = [
    "ACCOUNT_BLOCKS", "BLOCK", "BLOCK_FIELDS", "DAY", "DEFAULT_VEHICLES", "FAULT_MODES", "GAMES", "MAX_IDS",
    "MAX_STRONGHOLD_IDS", "MAX_VEHICLE_PAGE", "METHODS", "REGIONS", "REGION_RANGES", "SUM_FIELDS", "TANK_BLOCKS",
    "ApiError", "Counters", "Faults", "Profile", "RateLimiter", "SimClock", "SimState", "World",
    "account_created_at", "account_exists", "apply_fields", "clan_active", "clan_exists", "clan_members",
    "clan_of_account", "clan_state", "disbanded_clans", "encyclopedia_record", "error_body", "existing_accounts",
    "existing_clans", "generated_expectation", "generated_vehicles", "is_veteran", "load_vehicles", "main",
    "make_app", "missing_accounts", "missing_clans", "nickname", "parse_ids", "veteran_accounts",
]
