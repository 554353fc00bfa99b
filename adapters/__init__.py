"""Platform edges: slack/, discord/, and local/ (a simulated workspace)."""
