"""The web app's routes, one small module per page; each module exposes `routes`."""

from __future__ import annotations

from starlette.routing import BaseRoute

from bot.web import convertors  # noqa: F401 - registers `record_id` before the route modules build their paths
from bot.web.routes import (
    admin,
    ask_page,
    conversations,
    health,
    metrics,
    negotiation,
    settings_page,
    signin,
    transcript,
    workspace,
)


def all_routes() -> list[BaseRoute]:
    modules = (
        health,
        metrics,
        signin,
        conversations,
        transcript,
        negotiation,
        admin,
        ask_page,
        settings_page,
        workspace,
    )
    return [route for module in modules for route in module.routes]
