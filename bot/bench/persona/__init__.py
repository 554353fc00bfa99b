"""Needle in the Persona (appendix D.1.1): two Synthetic-Persona-Chat conversations with a split needle persona."""
