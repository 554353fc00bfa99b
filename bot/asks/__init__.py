"""Durable asks: the job record, the service adapters call, the worker that runs queued asks."""
