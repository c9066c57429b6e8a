"""Isolation: read-only volumes, the assets mount, secrets given to the simulator only."""
