"""The one place that reads command-line flags and environment variables."""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from store.constants import BACKUP_DUTY

VERSION = "1.12.0"
API_VERSION = "v1"
DEFAULT_METRICS_ALLOW = "127.0.0.1/32,::1/128"
TRACK_DAYS = 90  # days after its last lookup that the tracker still measures an account daily
PANEL_SIZE = 20_000  # active accounts per realm in the random panel (server/services/panel.py)


@dataclasses.dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8888
    processes: int = 1
    mongodb_uri: str | None = None
    db_name: str = "statsapi"
    data_dir: str = "./var"
    trusted_proxies: tuple = ()
    upstream_base_url: str | None = None
    application_id: str = "demo"
    # Requests per second the upstream allows this application_id, shared by every process
    # (Wargaming: commonly 10 for standalone, 20 for server applications).
    upstream_rps: float = 10.0
    # Requests per second per realm under the CDN's per-address throttle, inside upstream_rps
    # (server/upstream/realms.py; docs/deploy.md section 3a).
    upstream_realm_rps: tuple = (("eu", 6.0), ("na", 8.0), ("asia", 8.0))
    # Who runs this deployment (a URL or an e-mail address), sent in the upstream User-Agent.
    upstream_contact: str | None = None
    expected_values: str | None = None
    # "table": rate with the loaded table, computed rows only for the tanks it lacks; "computed":
    # every tank with a computed row uses it (server/services/expected.py).
    expected_values_source: str = "table"
    site_url: str = "http://127.0.0.1:8888/"
    # The absolute base of the links a page gives out (og:image, og:url: /player/{id}/{region} and the
    # others), e.g. https://stats.example.org; None: the request's scheme and Host.
    public_base_url: str | None = None
    source_name: str = "statsapi"
    rate_limit_scale: float = 1.0
    rate_collection_mb: int = 32
    # "capped" (MongoDB), "plain" (finished windows deleted by the limiter), or "auto": plain on
    # the embedded SecantusDB, whose $inc on a capped collection is slow (docs/benchmarks.md).
    rate_collection: str = "auto"
    jobs: bool = True
    # The tracker visits an account daily until this many days after its last lookup.
    track_days: int = TRACK_DAYS
    panel_size: int = PANEL_SIZE
    seed_demo: bool = False
    shutdown_grace: float = 10.0
    log_level: str = "INFO"
    # Daily backups of the irreplaceable collections into this directory (None: no scheduled
    # backups), the newest `backup_keep` kept (server/jobs/backups.py; docs/deploy.md section 8).
    backup_dir: str | None = None
    backup_keep: int = 7
    # The daily bulk files (server/services/dumps.py): "" for none; None: <data_dir>/dumps.
    dumps_dir: str | None = None
    # The share of its time a backup (the command's or the job's) works, resting the rest.
    backup_duty: float = BACKUP_DUTY
    # Who may read /metrics (by TCP peer address, never X-Forwarded-For).
    metrics_allow: tuple = (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("::1/128"))

    @property
    def dumps_directory(self) -> str | None:
        """Where the daily bulk files go: --dumps-dir, else DATA_DIR/dumps; None when set to ""."""
        if self.dumps_dir is None:
            return os.path.join(self.data_dir, "dumps")
        return self.dumps_dir or None

    @property
    def embedded_database(self) -> bool:
        return not self.mongodb_uri

    @property
    def capped_rate_counters(self) -> bool:
        if self.rate_collection == "auto":
            return not self.embedded_database
        return self.rate_collection == "capped"

    @property
    def attribution(self) -> str:
        return f"Statistics by statsapi ({self.site_url}). If you reuse this data, please link to that page."


def parse_networks(text: str) -> tuple:
    """Parse a comma-separated CIDR list; a bare address is a /32 (or /128)."""
    networks = []
    for part in (text or "").split(","):
        part = part.strip()
        if part:
            networks.append(ipaddress.ip_network(part, strict=False))
    return tuple(networks)


def _choice(name: str, value: str, choices: tuple) -> str:
    if value not in choices:
        raise SystemExit(f"{name} must be one of {', '.join(choices)}")
    return value


def _positive(name: str, value: float) -> float:
    if not value > 0:
        raise SystemExit(f"{name} must be a positive number")
    return value


def _panel_size(value: int) -> int:
    if not 0 <= value <= 1_000_000:
        raise SystemExit("--panel-size must be 0 to 1,000,000")
    return int(value)


def _share(name: str, value: float) -> float:
    if not 0 < value <= 1:
        raise SystemExit(f"{name} must be more than 0 and at most 1")
    return value


def _base_url(value: str | None) -> str | None:
    """An absolute http(s) URL without its trailing slash (None stays None)."""
    if value is None:
        return None
    if not value.startswith(("https://", "http://")) or any(c in value for c in "\"'<> "):
        raise SystemExit("--public-base-url must be an absolute http(s) URL, e.g. https://stats.example.org")
    return value.rstrip("/")


def _at_least_one(name: str, value: int) -> int:
    if value < 1:
        raise SystemExit(f"{name} must be at least 1")
    return value


def parse_realm_rates(text: str) -> tuple:
    """'eu=6,na=8,asia=8' -> (("eu", 6.0), ("na", 8.0), ("asia", 8.0)); realms left out keep their default."""
    rates = dict(Config.upstream_realm_rps)
    for part in (text or "").split(","):
        if not part.strip():
            continue
        realm, sep, value = part.partition("=")
        realm = realm.strip().lower()
        if not sep or realm not in rates:
            raise SystemExit(f"--upstream-realm-rps: expected realm=rate with a realm among {', '.join(rates)}")
        try:
            rate = float(value)
        except ValueError:
            raise SystemExit(f"--upstream-realm-rps: {realm}'s rate must be a number") from None
        rates[realm] = _positive("--upstream-realm-rps", rate)
    return tuple(rates.items())


def refuse_real_upstream_without_id(config: Config) -> str | None:
    """Pointed at the real hosts with no application_id (or Wargaming's blocked 'demo'): the line to
    print before exiting with status 2; None when the configuration can start."""
    if config.upstream_base_url or config.application_id not in ("", "demo"):
        return None
    return (
        "statsapi: STATSAPI_APPLICATION_ID is not set (or is 'demo', which the real Wargaming API blocks): "
        "set it to your application_id from https://developers.wargaming.net/applications/"
    )


def _bool(text: str) -> bool:
    return str(text).strip().lower() in ("1", "true", "yes", "on")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="statsapi", description="statsapi server")
    parser.add_argument(
        "command",
        nargs="?",
        default="serve",
        choices=["serve", "backup", "restore"],
        help="serve (default); backup --to DIR; restore --from DIR",
    )
    parser.add_argument("--to", dest="backup_to", help="backup: the directory to write (new or empty)")
    parser.add_argument("--from", dest="restore_from", help="restore: the backup directory to read")
    parser.add_argument(
        "--force", action="store_true", help="restore: merge into a database that already holds collected data"
    )
    parser.add_argument("--backup-dir", help="write a backup there daily (at 03:00 UTC), the newest kept")
    parser.add_argument("--backup-keep", type=int, help="how many daily backups --backup-dir keeps (default 7)")
    parser.add_argument(
        "--backup-duty",
        type=float,
        help=f"the share of its time a backup works, resting the rest: more than 0, at most 1 (default {BACKUP_DUTY})",
    )
    parser.add_argument(
        "--dumps-dir",
        help="where the daily bulk files are written and served from (default DATA_DIR/dumps; '' for none)",
    )
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--processes", type=int, help="number of server processes")
    parser.add_argument("--mongodb-uri", help="MongoDB URI; none starts the embedded database")
    parser.add_argument("--db-name")
    parser.add_argument("--data-dir", help="embedded database directory")
    parser.add_argument("--trusted-proxies", help="comma-separated CIDRs allowed to set X-Forwarded-For")
    parser.add_argument("--upstream-base-url", help="upstream simulator base URL")
    parser.add_argument(
        "--upstream-rps",
        type=float,
        help="requests per second the upstream allows the application_id, all processes together",
    )
    parser.add_argument(
        "--upstream-realm-rps",
        help="requests per second per realm under the CDN's per-address throttle, e.g. eu=6,na=8,asia=8 (the default)",
    )
    parser.add_argument(
        "--upstream-contact", help="the operator's contact (URL or e-mail) sent in the upstream User-Agent"
    )
    parser.add_argument("--expected-values", help="URL or file of the XVM expected-values table")
    parser.add_argument(
        "--expected-values-source",
        help="table (default): the loaded table, with rows computed from the population (the random panel "
        "where it has the players, else the tracked accounts) for the tanks it lacks; computed: the computed "
        "row for every tank that has one",
    )
    parser.add_argument("--site-url")
    parser.add_argument(
        "--public-base-url",
        help="absolute base of the pages' links and card images (og:image), e.g. https://stats.example.org; "
        "default: the request's scheme and Host",
    )
    parser.add_argument("--rate-limit-scale", type=float, help="multiply every rate limit (tests only)")
    parser.add_argument("--no-jobs", action="store_true", help="do not run background jobs (the tracker included)")
    parser.add_argument(
        "--track-days",
        type=int,
        help=f"days after its last lookup that an account is still measured daily by the tracker (default {TRACK_DAYS})",
    )
    parser.add_argument(
        "--panel-size",
        type=int,
        help=f"active accounts per realm in the random panel the server figures come from; 0: none (default {PANEL_SIZE})",
    )
    parser.add_argument("--seed-demo", action="store_true", help="seed demo data when the database is empty")
    parser.add_argument("--log-level")
    parser.add_argument(
        "--metrics-allow",
        help="comma-separated CIDRs allowed to read /metrics (default loopback: 127.0.0.1/32,::1/128)",
    )
    return parser


def get_config(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Flags win over environment variables, which win over defaults."""
    env = os.environ if environ is None else environ
    args = build_parser().parse_args(argv)

    def pick(flag: Any, name: str, default: Any, convert: Callable[[Any], Any] = str) -> Any:
        if flag is not None:
            return convert(flag)
        if name in env and env[name] != "":
            return convert(env[name])
        return default

    defaults = Config()
    port = pick(args.port, "STATSAPI_PORT", defaults.port, int)
    host = pick(args.host, "STATSAPI_HOST", defaults.host)
    site_default = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/"
    try:
        proxies = parse_networks(pick(args.trusted_proxies, "STATSAPI_TRUSTED_PROXIES", ""))
    except ValueError as exc:
        raise SystemExit(f"--trusted-proxies: {exc}") from None
    try:
        metrics_allow = parse_networks(pick(args.metrics_allow, "STATSAPI_METRICS_ALLOW", DEFAULT_METRICS_ALLOW))
    except ValueError as exc:
        raise SystemExit(f"--metrics-allow: {exc}") from None
    return Config(
        metrics_allow=metrics_allow,
        host=host,
        port=port,
        processes=max(1, pick(args.processes, "STATSAPI_PROCESSES", 1, int)),
        mongodb_uri=pick(args.mongodb_uri, "STATSAPI_MONGODB_URI", None),
        db_name=pick(args.db_name, "STATSAPI_DB_NAME", defaults.db_name),
        data_dir=pick(args.data_dir, "STATSAPI_DATA_DIR", defaults.data_dir),
        trusted_proxies=proxies,
        upstream_base_url=pick(args.upstream_base_url, "STATSAPI_UPSTREAM_BASE_URL", None),
        application_id=env.get("STATSAPI_APPLICATION_ID", defaults.application_id),
        upstream_rps=_positive(
            "--upstream-rps", pick(args.upstream_rps, "STATSAPI_UPSTREAM_RPS", defaults.upstream_rps, float)
        ),
        upstream_realm_rps=parse_realm_rates(pick(args.upstream_realm_rps, "STATSAPI_UPSTREAM_REALM_RPS", "")),
        upstream_contact=pick(args.upstream_contact, "STATSAPI_UPSTREAM_CONTACT", None),
        expected_values=pick(args.expected_values, "STATSAPI_EXPECTED_VALUES", None),
        expected_values_source=_choice(
            "--expected-values-source",
            pick(args.expected_values_source, "STATSAPI_EXPECTED_VALUES_SOURCE", defaults.expected_values_source),
            ("table", "computed"),
        ),
        backup_dir=pick(args.backup_dir, "STATSAPI_BACKUP_DIR", None),
        dumps_dir=pick(args.dumps_dir, "STATSAPI_DUMPS_DIR", None),
        backup_keep=_at_least_one(
            "--backup-keep", pick(args.backup_keep, "STATSAPI_BACKUP_KEEP", defaults.backup_keep, int)
        ),
        backup_duty=_share(
            "--backup-duty", pick(args.backup_duty, "STATSAPI_BACKUP_DUTY", defaults.backup_duty, float)
        ),
        site_url=pick(args.site_url, "STATSAPI_SITE_URL", site_default),
        public_base_url=_base_url(pick(args.public_base_url, "STATSAPI_PUBLIC_BASE_URL", None)),
        rate_limit_scale=pick(args.rate_limit_scale, "STATSAPI_RATE_LIMIT_SCALE", 1.0, float),
        rate_collection_mb=pick(None, "STATSAPI_RATE_COLLECTION_MB", defaults.rate_collection_mb, int),
        rate_collection=_choice(
            "STATSAPI_RATE_COLLECTION", pick(None, "STATSAPI_RATE_COLLECTION", "auto"), ("auto", "capped", "plain")
        ),
        jobs=not args.no_jobs and _bool(env.get("STATSAPI_JOBS", "1")),
        track_days=int(
            _positive("--track-days", pick(args.track_days, "STATSAPI_TRACK_DAYS", defaults.track_days, int))
        ),
        panel_size=_panel_size(pick(args.panel_size, "STATSAPI_PANEL_SIZE", defaults.panel_size, int)),
        seed_demo=args.seed_demo or _bool(env.get("STATSAPI_SEED_DEMO", "0")),
        log_level=pick(args.log_level, "STATSAPI_LOG_LEVEL", defaults.log_level),
    )
