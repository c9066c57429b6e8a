"""Record plane: one SQLite database per workspace holding versions, evals, work items and episodes,
and the files beside its rows. It imports no plane that runs anything (engine, serving, capture).

`store` reads and writes it; `schema` is its current layout and version, `migrations` brings an
older record up to it; `lease` says which runner holds an eval now; `integrity` refuses a damaged
file in one sentence and checks one; `manifest` and `arguments` are the typed contents of an
eval's JSON columns, which every plane reads (`typed` converts them).
"""
