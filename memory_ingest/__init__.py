"""Ingestion workers: pull chat history through the port into each member's memory."""
