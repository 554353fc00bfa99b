"""The local simulated workspace."""

from adapters.local.workspace import LocalWorkspace


__all__ = ["LocalWorkspace"]
