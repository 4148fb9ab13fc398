"""HTTP handlers; each module ends with its route list, gathered here."""

from handlers import (
    base,
    clans,
    dumps,
    index,
    metrics,
    online,
    openapi,
    pages,
    players,
    rankings,
    site,
    status,
    tanks,
    vehicles,
)

routes = [
    *index.routes,
    *players.routes,
    *tanks.routes,
    *vehicles.routes,
    *rankings.routes,
    *clans.routes,
    *online.routes,
    *dumps.routes,
    *status.routes,
    *openapi.routes,
    *metrics.routes,
    *base.routes,
    *pages.routes,
    *site.routes,
]
