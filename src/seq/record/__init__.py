"""Record plane: one SQLite database per workspace holding versions, evals, work items and episodes."""
