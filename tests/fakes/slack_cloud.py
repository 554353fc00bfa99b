"""Several Slack workspaces behind one Web API address, as Slack serves them: a call goes to the workspace its token
belongs to, and `oauth.v2.access` to the workspace that issued the code (each issues its own bot token).

    cloud = FakeSlackCloud([FakeSlackApi(world_a), FakeSlackApi(world_b, bot_token="xoxb-b")])
    base_url = await cloud.start()
    code = cloud.workspace("T2").issue_install_code("U1")
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from aiohttp import web

from tests.fakes.slack_api import FakeSlackApi, _bearer


@dataclass
class FakeSlackCloud:
    workspaces: list[FakeSlackApi]
    base_url: str = ""
    _runner: web.AppRunner | None = field(default=None, repr=False)

    def workspace(self, team_id: str) -> FakeSlackApi:
        return next(w for w in self.workspaces if w.world.id == team_id)

    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_post("/hooks/{path:.*}", self._hook)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/api/"
        for workspace in self.workspaces:
            workspace.base_url = self.base_url
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        params = dict(request.query)
        raw = await request.read()  # aiohttp keeps the body: the chosen workspace reads it again
        if raw and request.content_type == "application/json":
            params.update(json.loads(raw))
        elif raw:
            params.update(parse_qsl(raw.decode()))
        token = _bearer(request) or params.get("token")
        code = params.get("code")
        for workspace in self.workspaces:
            if workspace._actor(token) is not None or token in workspace.revoked_tokens:
                return await workspace._handle(request)
            if request.match_info["method"] == "oauth.v2.access" and code in workspace.oauth_codes:
                return await workspace._handle(request)
        return web.json_response({"ok": False, "error": "invalid_auth"})

    async def _hook(self, request: web.Request) -> web.Response:
        return await self.workspaces[0]._response_url(request)
