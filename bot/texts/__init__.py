"""Every user-facing text, as functions, by where it shows. The ask flow's: `rejection_texts` (a request refused),
`progress_texts` (the status line, cancelling), `conversation_texts` and `approval_texts` (inside the agents' talk,
sharing and its approval), `transcript_texts` (an ask's record), `answer_texts` and `failure_texts` (the final post),
`follow_up_texts` (follow-ups, feedback), `settings_texts` (a member's own settings); `chat_texts` is the wording both
chat platforms share. Adapters render these strings as they are; the model never sees them (its text lives in
`prompts/`).
"""
