"""The message command "Ask about this thread" (right-click a message, Apps): a form with a user picker for the
colleagues and a text box for the question; the thread (or, outside a thread, the channel's recent messages up to
that message) becomes the ask's context.

The colleagues are a user select inside the modal (Discord's `Label` component, discord.py 2.6+), so members are
picked, not typed. The context is read as the bot through the API, but only from where the member invoked the
command (a channel or thread they can see) and only when they may read its history there (else the one message
they right-clicked). The answer is the form's response in that channel or thread: one message, visible to whoever
sees it there, edited from status to answer. The submission is deferred before anything is read (Discord wants an
answer within 3 seconds; the history and the checks may take longer): the member sees "thinking…" in the channel,
which becomes the status message, or, when the ask is refused, gives way to a reply only they see.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from adapters.discord import texts
from adapters.discord.chat_asks import ChatAsk, Where, ask_in_chat
from adapters.discord.convert import readable
from adapters.discord.services import services_of
from adapters.discord.status import StatusState


log = logging.getLogger(__name__)
CONTEXT_MESSAGES = 50  # the most recent messages read as the thread's context
CONTEXT_CHARS = 8000  # the core trims further to its prompt budget
MAX_COLLEAGUES = 10


class AskThreadForm(discord.ui.Modal, title=texts.ASK_ABOUT_THREAD):
    colleagues: discord.ui.Label[Any] = discord.ui.Label(
        text=texts.MODAL_COLLEAGUES,
        description=texts.MODAL_COLLEAGUES_HINT,
        component=discord.ui.UserSelect(
            custom_id="askwith:thread:colleagues", min_values=1, max_values=MAX_COLLEAGUES
        ),
    )
    question: discord.ui.Label[Any] = discord.ui.Label(
        text=texts.MODAL_QUESTION,
        component=discord.ui.TextInput(
            custom_id="askwith:thread:question", style=discord.TextStyle.paragraph, max_length=1000,
            placeholder=texts.MODAL_QUESTION_PLACEHOLDER,
        ),
    )  # fmt: skip

    def __init__(self, target: discord.Message) -> None:
        super().__init__(custom_id=f"askwith:thread:{target.id}")
        self.target = target

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        svc = services_of(interaction)
        picked = self.colleagues.component.values  # type: ignore[attr-defined]
        question = str(self.question.component.value)  # type: ignore[attr-defined]
        context = await thread_context(interaction, self.target)
        ask = ChatAsk(interaction.user, question, tuple(str(user.id) for user in picked), context=context)
        await ask_in_chat(svc, ask, RespondTo(interaction))

    async def on_error(self, interaction: discord.Interaction, error: Exception, /) -> None:
        log.error("the ask-about-this-thread form failed", exc_info=error)
        await RespondTo(interaction).say(texts.command_failed())


class RespondTo(Where):
    """The form's deferred submission: the status message is its response in the channel or thread."""

    def __init__(self, interaction: discord.Interaction) -> None:
        self.interaction = interaction
        self.channel = interaction.channel  # type: ignore[assignment]

    async def post(self, state: StatusState) -> discord.Message:
        return await self.interaction.edit_original_response(**state.kwargs())

    async def say(self, text: str) -> None:
        """For the member alone: the public "thinking…" goes, and an ephemeral follow-up says it."""
        if not self.interaction.response.is_done():
            await self.interaction.response.send_message(text, ephemeral=True)
            return
        try:
            await self.interaction.delete_original_response()
        except discord.HTTPException as exc:  # already gone (a moderator, an expired token): the follow-up still goes
            log.info("the form's response not deleted: HTTP %s, code %s", exc.status, exc.code)
        await self.interaction.followup.send(text, ephemeral=True)


async def thread_context(interaction: discord.Interaction, target: discord.Message) -> str:
    """The thread's (or channel's) recent messages, oldest first, one `Name: text` line each; only the target
    message when the member may not read the history there."""
    channel = interaction.channel
    if not interaction.permissions.read_message_history or channel is None:
        return _line(target)
    source = target.thread if target.thread is not None else channel
    before = None if source is not channel or isinstance(channel, discord.Thread) else discord.Object(target.id + 1)
    lines: list[str] = []
    try:
        async for message in source.history(limit=CONTEXT_MESSAGES, before=before):  # type: ignore[union-attr]
            if message.content and message.type in (discord.MessageType.default, discord.MessageType.reply):
                lines.append(_line(message))
    except discord.HTTPException as exc:  # the bot may not read it: the right-clicked message is all there is
        log.info("context of %s not read: HTTP %s, code %s", source.id, exc.status, exc.code)
        return _line(target)
    if target.thread is not None:
        lines.append(_line(target))  # a thread's starter message is in its parent, not in the thread
    text = "\n".join(reversed(lines))
    return text[-CONTEXT_CHARS:]


def _line(message: discord.Message) -> str:
    users = {str(u.id): u.display_name for u in message.mentions}
    roles = {str(r.id): r.name for r in message.role_mentions}
    return f"{message.author.display_name}: {readable(message.content, users, roles)}"


@app_commands.context_menu(name=texts.ASK_ABOUT_THREAD)
@app_commands.guild_only()
async def ask_about_thread(interaction: discord.Interaction, message: discord.Message) -> None:
    await interaction.response.send_modal(AskThreadForm(message))


def register(tree: app_commands.CommandTree[discord.Client]) -> None:
    tree.add_command(ask_about_thread)
