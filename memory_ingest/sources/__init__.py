"""Where history comes from besides a live platform: dataset replays that build a local `World`."""
