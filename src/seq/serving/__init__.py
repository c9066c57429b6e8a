"""Serving plane: how the episode loop reaches a policy (inline in the worker, or behind a socket)."""
