"""Asking where you are: a mention in a channel or thread, a DM to the bot, a follow-up in an answer's thread.

    text = mention_text(event["text"], bot_user_id)   # "<@UBOT> ask <@UBOB> when?" -> "<@UBOB> when?"
    await ChatAsks(services).start(user, text, channel_id, thread_id, in_dm=False)

The ask is checked by the core (AskRejectedError: its text goes back to the member, ephemerally in a channel), a
status message with a Cancel button is posted where the answer will land, the ask runs in this process, and its
stages update the status message (coalesced, see `adapters.slack.status`); the answer then replaces the status
message (`adapters.slack.answers`).

Follow-ups: a message in a thread that holds an ask (asked there, or replying to an answer posted at top level)
continues that ask with the same colleagues unless it names others. In a channel the bot only reacts to mentions
(members talk in threads without meaning the bot); in a DM every message is for the bot.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING

from adapters.slack import texts
from adapters.slack.answer_blocks import group_confirm_blocks
from adapters.slack.command_text import parse_ask
from adapters.slack.convert import message_id, split_message_id
from adapters.slack.status import AssistantStatus, StatusMessage
from bot.asks.progress import watch_progress
from bot.asks.requests import GROUP_CONFIRM_ABOVE
from bot.asks.service import AskRequest
from bot.errors import AskRejectedError, AskwithError, ChatPlatformError


if TYPE_CHECKING:
    from adapters.slack.services import SlackServices


log = logging.getLogger(__name__)
SUBTEAM = re.compile(r"^<!subteam\^([A-Z0-9]+)(?:\|[^>]*)?>$")
ASK_WORD = re.compile(r"^ask\b[:,]?\s*", re.IGNORECASE)


def mention_text(text: str, bot_user_id: str) -> str:
    """The text after the leading mention of the bot and an optional `ask`."""
    stripped = re.sub(rf"^\s*<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[:,]?\s*", "", text or "")
    return ASK_WORD.sub("", stripped, count=1).strip()


class ChatAsks:
    def __init__(self, services: SlackServices) -> None:
        self.svc = services

    async def start(
        self,
        user_id: str,
        text: str,
        channel_id: str,
        ts: str,
        thread_ts: str | None,
        *,
        assistant: bool = False,
        confirmed: bool = False,
    ) -> int | None:
        """An ask from a message `ts` in `channel_id` (in thread `thread_ts`, if any). Returns its id, or None
        when the member was told why it can't run."""
        svc = self.svc
        text, group_size = await self.expand_groups(text, user_id)
        parsed = parse_ask(text)
        if group_size and len(parsed.colleagues) > GROUP_CONFIRM_ABOVE and not confirmed:
            await self.confirm(user_id, channel_id, ts, thread_ts, text, len(parsed.colleagues))
            return None
        thread_id = message_id(channel_id, thread_ts or ts)  # a top-level mention: answer in its own thread
        in_dm = channel_id.startswith("D")
        follow_up_of = await svc.asks.ask_in_thread(channel_id, thread_id) if thread_ts else None
        if parsed.wants_help and follow_up_of is None:
            await self.tell(user_id, channel_id, texts.MENTION_HELP, thread_ts)
            return None
        request = AskRequest(
            user_id,
            [c.ref for c in parsed.colleagues],
            parsed.question,
            origin_channel_id=channel_id,
            # In a DM a top-level message is answered at top level (a reply to the answer is a follow-up there).
            origin_thread_id=thread_id if (thread_ts or not in_dm) else None,
            follow_up_of=follow_up_of,
        )
        try:
            ask_id = await svc.submit(request)
        except AskRejectedError as exc:
            await self.tell(user_id, channel_id, str(exc), thread_ts)
            return None
        log.info("ask #%s submitted by %s in %s", ask_id, user_id, channel_id)
        svc.spawn(self.follow(ask_id, channel_id, request.origin_thread_id, user_id, assistant=assistant))
        return ask_id

    async def expand_groups(self, text: str, user_id: str) -> tuple[str, int]:
        """Leading user-group mentions (`<!subteam^S1|@design>`) become their members' mentions (not the asker);
        returns the text and how many members the groups brought in."""
        words, out, added = text.split(), [], 0
        while words and (match := SUBTEAM.match(words[0].rstrip(",;:"))):
            words.pop(0)
            try:
                members = await self.svc.port.usergroup_members(match.group(1))
            except ChatPlatformError as exc:
                log.info("user group %s not expanded: %s", match.group(1), exc)
                continue
            mentions = [f"<@{m}>" for m in members if m != user_id and f"<@{m}>" not in out]
            out += mentions
            added += len(mentions)
        if not added:
            return text, 0
        return " ".join([*out, *words]), added

    async def confirm(
        self, user_id: str, channel_id: str, ts: str, thread_ts: str | None, text: str, count: int
    ) -> None:
        """Many colleagues at once (a user group): the asker confirms with a button before anyone's agent is asked."""
        value = json.dumps({"c": channel_id, "ts": ts, "th": thread_ts, "t": text})[:2000]
        blocks = group_confirm_blocks(texts.group_confirm(count), value)
        try:
            await self.svc.port.post_ephemeral_blocks(channel_id, user_id, texts.group_confirm(count), blocks)
        except ChatPlatformError:
            await self.svc.port.post_blocks(await self.svc.port.open_dm(user_id), texts.group_confirm(count), blocks)

    async def follow(
        self, ask_id: int, channel_id: str, thread_id: str | None, user_id: str, *, assistant: bool = False
    ) -> None:
        """Post the status message (the Assistant panel: its status line), run the ask here, and keep the status
        on its latest stage."""
        svc = self.svc
        status: StatusMessage | None
        if assistant and thread_id:
            ts = split_message_id(thread_id)[1]
            status = AssistantStatus(svc.port, channel_id, ts, ask_id, min_interval_s=svc.status_interval_s)
        else:
            status = await self._status_message(ask_id, channel_id, thread_id, user_id)
        if status is not None:
            svc.answers.expect(ask_id, status)
            svc.spawn(self._watch(ask_id, status))
        await svc.run_ask(ask_id)

    async def _status_message(
        self, ask_id: int, channel_id: str, thread_id: str | None, user_id: str
    ) -> StatusMessage | None:
        try:
            return await StatusMessage.post(self.svc.port, channel_id, thread_id, ask_id, self.svc.status_interval_s)
        except ChatPlatformError as exc:  # the answer falls back to a DM too (adapters.slack.answers)
            log.info("ask #%s: no status message in %s: %s", ask_id, channel_id, exc)
        try:
            dm = await self.svc.port.open_dm(user_id)
            return await StatusMessage.post(self.svc.port, dm, None, ask_id, self.svc.status_interval_s)
        except ChatPlatformError as exc:
            log.warning("ask #%s: no status message at all: %s", ask_id, exc)
            return None

    async def _watch(self, ask_id: int, status: StatusMessage) -> None:
        try:
            async for progress in watch_progress(self.svc.db, self.svc.asks.progress, ask_id):
                status.show(progress.text, final=progress.final)
        except AskwithError as exc:
            log.warning("ask #%s: progress not followed: %s", ask_id, exc)

    async def tell(self, user_id: str, channel_id: str, text: str, thread_ts: str | None) -> None:
        """A reply only the member sees: ephemeral in a channel, a message in the DM."""
        port = self.svc.port
        try:
            if channel_id.startswith("D"):
                await port.post(channel_id, text, thread_id=message_id(channel_id, thread_ts) if thread_ts else None)
            else:
                await port.post_ephemeral(channel_id, user_id, text)
            return
        except ChatPlatformError as exc:  # not in that conversation (or the bot is not): the DM instead
            log.info("could not tell %s in %s: %s", user_id, channel_id, exc)
        try:
            await port.post(await port.open_dm(user_id), text)
        except ChatPlatformError as exc:
            log.warning("could not tell %s: %s", user_id, exc)
