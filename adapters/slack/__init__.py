"""The Slack app: `/ask-with`, `/askwith`, approvals, live ingestion, and `SlackPort` (the chat port over Slack)."""
