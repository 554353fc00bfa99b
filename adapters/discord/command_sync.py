"""askwith's commands sent to Discord only when they changed.

Discord keeps an application's global commands until they are overwritten, and rate-limits the overwrite (a bulk
`PUT` of every command) tightly; syncing on every start, as a restart loop would, wastes that budget and briefly
refreshes every member's command list. So the commands' payload (what `CommandTree.sync` would send) is hashed, and
sent only when the hash differs from the one stored after the last successful sync, in a file under the data
directory kept per application (a new bot token is a new application: synced once).

    synced = await sync_if_changed(client.tree, settings.data_dir)   # True: sent now; False: unchanged
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import discord
from discord import app_commands


log = logging.getLogger(__name__)


def commands_hash(tree: app_commands.CommandTree[discord.Client]) -> str:
    """The global commands as Discord would receive them, hashed (order and key order do not matter)."""
    payload = sorted(
        (command.to_dict(tree) for command in tree.get_commands()), key=lambda c: (c.get("type", 1), c["name"])
    )
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def hash_file(data_dir: Path, application_id: int | None) -> Path:
    return data_dir / f"discord-commands-{application_id}.sha256"


async def sync_if_changed(tree: app_commands.CommandTree[discord.Client], data_dir: Path) -> bool:
    """Sync the global commands when they differ from those last synced from here; True when sent."""
    wanted = commands_hash(tree)
    stored = hash_file(data_dir, tree.client.application_id)
    if stored.is_file() and stored.read_text().strip() == wanted:
        log.info("Discord commands unchanged since the last sync: not sent")
        return False
    await tree.sync()
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(wanted + "\n")  # only once Discord took them: a failed sync is tried again next start
    log.info("Discord commands synced (%d)", len(tree.get_commands()))
    return True
