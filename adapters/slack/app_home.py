"""The App Home tab: a member's settings as controls, their recent asks, and what their agent shared, with whom.

Every control calls the same core operations as `/askwith` (`MemberSettingsStore`, the port's token revoke), and
the tab is re-published after each change so it always shows what is stored.

    await publish_home(svc, user_id)     # views.publish of the member's tab
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from adapters.slack import texts
from adapters.slack.mrkdwn import escape, link
from bot.asks.read_models.member_views import recent_asks, shared_by
from bot.errors import UnknownMemberError
from bot.platform.port import SharePolicy
from bot.store.member_settings import MemberSettings
from bot.texts import chat_texts, settings_texts


if TYPE_CHECKING:
    from adapters.slack.services import SlackServices


MEMORY_ACTION = "askwith_home_memory"
SHARE_ACTION = "askwith_home_share"
EXCLUDE_ACTION = "askwith_home_exclude"
DISCONNECT_ACTION = "askwith_home_disconnect"
CONNECT_ACTION = "askwith_home_connect"
HOME_ACTIONS = (MEMORY_ACTION, SHARE_ACTION, EXCLUDE_ACTION, DISCONNECT_ACTION, CONNECT_ACTION)
Block = dict[str, Any]


async def publish_home(svc: SlackServices, user_id: str) -> None:
    await svc.port.client.views_publish(
        user_id=user_id, view={"type": "home", "blocks": await home_blocks(svc, user_id)}
    )


async def home_blocks(svc: SlackServices, user_id: str) -> list[Block]:
    workspace = await svc.workspace()
    try:
        current = await svc.member_settings.get(workspace, user_id)
    except UnknownMemberError:
        return [_section(texts.settings_not_synced())]
    connected = await _has_token(svc, user_id)
    connect_url = svc.install.authorize_url() if svc.install is not None else None
    blocks = [_header(texts.HOME_SETTINGS), *settings_blocks(current, connected, connect_url)]
    if svc.asks is None:
        return blocks
    handle = (await svc.asks.roster.profile(user_id)).handle
    blocks += [{"type": "divider"}, _header(chat_texts.RECENT_ASKS_TITLE)]
    asks = await recent_asks(svc.db, svc.asks.workspace_id, handle, limit=10)
    for ask in asks:
        url = svc.asks.transcript_link(ask.ask_id, handle) if svc.asks.transcript_link else None
        blocks.append(
            _section(
                texts.home_ask_line(
                    ask.ask_id, escape(ask.question), ask.status, url and link(url, chat_texts.TRANSCRIPT_BUTTON)
                )
            )
        )
    if not asks:
        blocks.append(_section(texts.HOME_NO_ASKS))
    blocks += [{"type": "divider"}, _header(chat_texts.SHARED_TITLE)]
    shared = await shared_by(svc.db, svc.asks.workspace_id, handle, limit=15)
    for item in shared:
        when = item.at.strftime("%Y-%m-%d %H:%M")
        blocks.append(_section(texts.home_shared_line(escape(item.requester), escape(item.text), when, item.approval)))
    if not shared:
        blocks.append(_section(texts.HOME_NOTHING_SHARED))
    return blocks[:100]  # Slack's limit for a view


def settings_blocks(current: MemberSettings, connected: bool, connect_url: str | None) -> list[Block]:
    memory = {
        "type": "section",
        "text": {"type": "mrkdwn", "text": texts.home_memory(settings_texts.memory_state(current.opted_in))},
        "accessory": _button(
            MEMORY_ACTION,
            texts.HOME_TURN_OFF if current.opted_in else texts.HOME_TURN_ON,
            "off" if current.opted_in else "on",
        ),
    }
    options = [_option(texts.share_label(policy), policy.value) for policy in SharePolicy]
    share = {
        "type": "section",
        "text": {"type": "mrkdwn", "text": texts.home_share(settings_texts.SHARE_MEANING[current.share])},
        "accessory": {
            "type": "static_select",
            "action_id": SHARE_ACTION,
            "options": options,
            "initial_option": _option(texts.share_label(current.share), current.share.value),
        },
    }
    picker: Block = {
        "type": "multi_conversations_select",
        "action_id": EXCLUDE_ACTION,
        "filter": {"include": ["public", "private"]},
    }
    if current.excluded_channels:
        picker["initial_conversations"] = list(current.excluded_channels)
    exclude = {"type": "section", "text": {"type": "mrkdwn", "text": texts.HOME_EXCLUDED}, "accessory": picker}
    blocks = [memory, share, exclude]
    if connected:
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": texts.HOME_CONNECTED},
                "accessory": _button(DISCONNECT_ACTION, texts.HOME_DISCONNECT, "disconnect"),
            }
        )
    elif connect_url:  # the member install flow, opened by Slack itself
        connect = {**_button(CONNECT_ACTION, texts.HOME_CONNECT, "connect"), "url": connect_url}
        blocks.append(_section(texts.HOME_NOT_CONNECTED) | {"accessory": connect})
    return blocks


async def apply_home_action(svc: SlackServices, user_id: str, action: dict[str, Any]) -> None:
    """One control changed: the same core operation `/askwith` runs."""
    store, workspace = svc.member_settings, await svc.workspace()
    action_id = action["action_id"]
    if action_id == MEMORY_ACTION:
        on = action.get("value") == "on"
        await store.set_opted_in(workspace, user_id, on)
        if not on:
            svc.port.drop_member_token(user_id)
    elif action_id == SHARE_ACTION:
        await store.set_share_policy(workspace, user_id, SharePolicy(action["selected_option"]["value"]))
    elif action_id == EXCLUDE_ACTION:
        wanted = set(action.get("selected_conversations") or [])
        current = set((await store.get(workspace, user_id)).excluded_channels)
        for channel_id in sorted(wanted - current):
            await store.set_excluded(workspace, user_id, channel_id, True)
        for channel_id in sorted(current - wanted):
            await store.set_excluded(workspace, user_id, channel_id, False)
    elif action_id == DISCONNECT_ACTION:
        await svc.port.revoke_member_token(user_id)


async def _has_token(svc: SlackServices, user_id: str) -> bool:
    return user_id in await svc.port.token_holders()


def _header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:2900]}}


def _option(label: str, value: str) -> Block:
    return {"text": {"type": "plain_text", "text": label}, "value": value}


def _button(action_id: str, label: str, value: str) -> Block:
    return {"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": label}, "value": value}
