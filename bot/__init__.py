"""askwith: personal agents that answer questions together under information asymmetry."""
