"""What every layer shares: logging, bounded JSON, record ids, text folding, time zones, the prompt loader.

They import nothing of askwith but the settings, the errors and each other.
"""
