"""The Discord adapter: `DiscordPort` (askwith's chat port over discord.py) and the bot's commands, views and
events, each module registering itself on the client (`adapters.discord.bot.build_client`)."""
