"""HTTP handlers; each module ends with its route list, gathered here."""

from handlers import (
    base,
    clans,
    dumps,
    index,
    llms,
    metrics,
    online,
    openapi,
    pages,
    players,
    rankings,
    roster,
    site,
    status,
    tanks,
    vehicles,
)

routes = [
    *index.routes,
    *players.routes,
    *roster.routes,
    *tanks.routes,
    *vehicles.routes,
    *rankings.routes,
    *clans.routes,
    *online.routes,
    *dumps.routes,
    *status.routes,
    *openapi.routes,
    *metrics.routes,
    *llms.routes,
    *base.routes,
    *pages.routes,
    *site.routes,
]
