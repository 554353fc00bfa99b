"""The fake Discord API's interaction endpoints and message checks, failing like Discord does.

- `POST /interactions/{id}/{token}/callback`: types 4 (message), 5 (deferred), 6 (deferred update), 7 (update the
  clicked message), 9 (open a modal). A second answer is 400/40060 "already acknowledged"; an interaction Discord
  forgot (its 3 s passed, `forget_interaction`) is 404/10062 "Unknown interaction". A type-4 answer becomes a
  message: in the channel for everyone, or kept aside when ephemeral (only its user sees it).
- `GET|PATCH|DELETE /webhooks/{app}/{token}/messages/@original` and `POST /webhooks/{app}/{token}`: the response and
  follow-ups; an expired token answers 401/50027 (see `FakeDiscordApi.expire`).
- Embeds are checked against Discord's limits (400/50035 Invalid Form Body), so an adapter that overflows fails here
  as it would for real.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.platform.port import ChatMessage
from tests.fakes.discord_limits import check_message, keep_parts
from tests.fakes.discord_routes import (
    ApiCall,
    ApiError,
    FollowUp,
    InteractionCallback,
    check_token,
    json_response,
    no_content,
)
from tests.fakes.discord_shapes import message_json, new_id


if TYPE_CHECKING:
    from tests.fakes.discord_api import FakeDiscordApi

EPHEMERAL = 64
MESSAGE, DEFERRED, DEFERRED_UPDATE, UPDATE, MODAL = 4, 5, 6, 7, 9


# ---------------------------------------------------------------------- interaction responses
def callback(api: FakeDiscordApi, call: ApiCall, interaction_id: str, token: str) -> web.Response:
    if token in api.gone_interactions:
        raise _error(404, 10062, "Unknown interaction")
    if token in api.acknowledged:
        raise _error(400, 40060, "Interaction has already been acknowledged.")
    body = call.body or {}
    data = body.get("data") or {}
    kind = int(body["type"])
    if kind in (MESSAGE, UPDATE):
        check_message(data)
    api.acknowledged.add(token)
    api.callbacks.append(InteractionCallback(interaction_id, token, kind, data))
    context = api.interaction_context.setdefault(token, {})
    if kind == DEFERRED and int(data.get("flags") or 0) & EPHEMERAL:
        context["ephemeral"] = True
    if kind == MESSAGE:
        api.originals[token] = _respond(api, context, data)
    elif kind == UPDATE and (clicked := context.get("message_id")):
        _update(api, clicked, data)
        api.originals[token] = clicked
    elif kind in (DEFERRED_UPDATE,) and (clicked := context.get("message_id")):
        api.originals[token] = clicked
    flags = int(data.get("flags") or 0)
    answer: dict[str, Any] = {
        "interaction": {
            "id": interaction_id,
            "type": context.get("type", 2),
            "response_message_loading": kind == DEFERRED,
            "response_message_ephemeral": bool(flags & EPHEMERAL),
        }
    }
    if kind in (MESSAGE, UPDATE) and token in api.originals:
        answer["resource"] = {"type": kind, "message": message_payload(api, api.originals[token])}
    return _ok(answer)


def _respond(api: FakeDiscordApi, context: dict[str, Any], data: dict[str, Any]) -> str:
    """A type-4 answer: a message in the interaction's channel (everyone there sees it) or an ephemeral one."""
    flags = int(data.get("flags") or 0)
    channel_id = str(context.get("channel_id") or api.guild_id)
    elsewhere = channel_id not in api.world.channels and channel_id not in api.public_threads()
    if flags & EPHEMERAL or context.get("ephemeral") or elsewhere:
        message_id = new_id()
        api.ephemeral[message_id] = {"channel_id": channel_id, "user_id": context.get("user_id"), **data}
        keep_parts(api, message_id, data)
        return message_id
    thread = api.public_threads().get(channel_id)
    parent = thread.parent_id if thread else channel_id
    message = api.add_bot_message(parent, data.get("content") or "", thread_id=thread.id if thread else None)
    keep_parts(api, message.id, data)
    return message.id


def _update(api: FakeDiscordApi, message_id: str, data: dict[str, Any]) -> None:
    if message_id in api.ephemeral:
        api.ephemeral[message_id].update({k: v for k, v in data.items() if k in ("content", "embeds", "components")})
    elif "content" in data:
        api.edit_message("", message_id, data.get("content"))
    keep_parts(api, message_id, data)


def original(api: FakeDiscordApi, call: ApiCall, application_id: str, token: str) -> web.Response:
    """GET, PATCH or DELETE the interaction's response message."""
    check_token(api, token)
    if token in api.gone_interactions:
        raise _error(404, 10015, "Unknown Webhook")
    message_id = api.originals.get(token)
    if call.method == "PATCH":
        body = call.body or {}
        check_message(body)
        api.followups.append(FollowUp(new_id(), token, body.get("content") or "", 0, original=True))
        if message_id is None:  # a deferred response, edited into its message
            message_id = _respond(api, api.interaction_context.get(token, {}), body)
            api.originals[token] = message_id
        else:
            _update(api, message_id, body)
    if message_id is None:
        raise _error(404, 10008, "Unknown Message")
    if call.method == "DELETE":
        api.ephemeral.pop(message_id, None)
        if (found := api.find_message(message_id)) is not None:
            api.delete_message(found)
        return no_content()
    return _ok(message_payload(api, message_id))


def message_payload(api: FakeDiscordApi, message_id: str) -> dict[str, Any]:
    if (kept := api.ephemeral.get(message_id)) is not None:
        bot = api.world.members[api.world.bot_id]
        stand_in = ChatMessage(message_id, kept["channel_id"], bot.id, _now(), kept.get("content") or "")
        payload = message_json(
            stand_in, bot, channel_id=kept["channel_id"], guild_id=api.guild_id, flags=EPHEMERAL,
            components=api.components.get(message_id), embeds=api.embeds.get(message_id),
        )  # fmt: skip
        return payload
    found = api.find_message(message_id)
    if found is None:
        raise _error(404, 10008, "Unknown Message")
    return api.message_out(found)


def _now() -> datetime:
    return datetime.now(UTC)


def _ok(data: Any, status: int = 200) -> web.Response:
    return json_response(data, status)


def _error(status: int, code: int, message: str) -> ApiError:
    return ApiError(status, code, message)
