"""Every user-facing text, by where it shows: `messages` (the ask flow's replies), `chat_texts` (wording both chat
platforms share). The model's text lives in `prompts/`.
"""
