"""The vehicle catalogue and the tanks' strength with their drivers' skill taken out."""

from __future__ import annotations

import dataclasses

from handlers.base import BaseHandler, api_routes
from handlers.params import arguments_of
from handlers.tanks import TankFilterArgs
from server.contract.catalogue import TANK_STRENGTH, VEHICLES
from server.serving.answers import POPULATION_TAG


@arguments_of(VEHICLES)
@dataclasses.dataclass(frozen=True, slots=True)
class VehiclesArgs(TankFilterArgs):
    premium: str | None
    search: str | None


@arguments_of(TANK_STRENGTH)
@dataclasses.dataclass(frozen=True, slots=True)
class TankStrengthArgs(TankFilterArgs):
    days: int
    population: str | None


class VehiclesHandler(BaseHandler):
    endpoint = VEHICLES

    async def get(self, *path: str) -> None:
        args = self.arguments(path, VehiclesArgs)
        premium = None if args.premium is None else args.premium == "true"
        self.respond(
            await self.services.vehicles.vehicles(args.region, args.query(), premium, args.search),
            tag=POPULATION_TAG,
        )


class TankStrengthHandler(BaseHandler):
    endpoint = TANK_STRENGTH

    async def get(self, *path: str) -> None:
        args = self.arguments(path, TankStrengthArgs)
        self.respond(
            await self.services.vehicles.strength(args.region, args.days, args.query(), args.population),
            tag=POPULATION_TAG,
        )


routes = api_routes(VehiclesHandler, TankStrengthHandler)
