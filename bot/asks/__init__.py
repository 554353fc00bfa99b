"""Durable asks: the job record, the service adapters call, the worker that runs queued asks, and what people read
of them (`read_models`)."""
