"""Approve / Deny buttons for a member whose share policy is "ask me".

The buttons are dynamic items: the approval id and the decision live in the button's custom id, so a click is
understood by any running bot process (no per-message view kept in memory). A click goes to the port, which knows
whether that approval is still pending and who may decide it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import discord

from bot.consent import card as cards
from bot.consent.pending import ApprovalStore
from bot.platform.port import ApprovalDecision, ApprovalKind
from bot.texts import chat_texts


CUSTOM_ID = "askwith:approval:{decision}:{approval_id}"
DECISIONS = {
    "approve": ApprovalDecision.APPROVED,
    "all": ApprovalDecision.APPROVED_ALL,  # everything the member's agent says in this ask
    "deny": ApprovalDecision.DENIED,
}
# Approve is the one coloured button; Deny is safe (nothing leaves), so it is not styled as a danger; approving
# everything in the ask comes last, beside a line on the card that says what it means.
STYLES = {"approve": discord.ButtonStyle.success, "deny": discord.ButtonStyle.secondary}


@dataclass(frozen=True)
class ApprovalClick:
    text: str  # what the member reads
    closes_prompt: bool  # True: replace the prompt (buttons gone); False: an ephemeral note, prompt unchanged


class ApprovalButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"askwith:approval:(?P<decision>approve|all|deny):(?P<approval_id>[\w.\-]{1,70})",
):
    def __init__(self, decision: str, approval_id: str, *, kind: ApprovalKind = ApprovalKind.SHARE) -> None:
        style = STYLES.get(decision, discord.ButtonStyle.secondary)
        yes, no = chat_texts.APPROVAL_BUTTONS[kind]
        label = {"approve": yes, "all": cards.APPROVE_ALL}.get(decision, no)
        custom_id = CUSTOM_ID.format(decision=decision, approval_id=approval_id)
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=custom_id))
        self.decision = decision
        self.approval_id = approval_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button[Any], match: Any, /
    ) -> ApprovalButton:
        return cls(match["decision"], match["approval_id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        # Acknowledged before the decision is stored (Discord wants an answer within 3 s, the database may be slow);
        # the prompt is then edited, or the clicker alone reads why not.
        await interaction.response.defer()
        # approvals are one registry for the whole bot: any server's port resolves a click in a DM
        services = interaction.client.services_for(interaction.guild_id)  # type: ignore[attr-defined]
        click = await services.port.resolve_approval(
            ApprovalStore(services.db), self.approval_id, DECISIONS[self.decision], member_id=str(interaction.user.id)
        )
        if click.closes_prompt:
            await interaction.edit_original_response(content=click.text, view=None)
        else:
            await interaction.followup.send(click.text, ephemeral=True)


def approval_view(approval_id: str, kind: ApprovalKind = ApprovalKind.SHARE) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(ApprovalButton("approve", approval_id, kind=kind))
    view.add_item(ApprovalButton("deny", approval_id, kind=kind))
    if kind is ApprovalKind.SHARE:
        view.add_item(ApprovalButton("all", approval_id, kind=kind))
    return view


def register(client: discord.Client) -> None:
    client.add_dynamic_items(ApprovalButton)
