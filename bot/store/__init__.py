"""Persistence: SQLAlchemy models, the async engine and Alembic migrations."""
