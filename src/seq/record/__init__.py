"""Record plane: one SQLite database per workspace holding versions, evals, work items and episodes,
and the files beside its rows. It imports no plane that runs anything (engine, serving, capture)."""
