"""Reference algorithms, shipped as black-box executables that speak the seqbench protocol.

- `exact-knn` (exact_knn.py): exact k-nearest neighbours over token n-gram features; the screening baseline.
- `random` (random_guess.py): a uniformly random training target; probabilities uniform over them.
- `memorizer` (memorizer.py): a lookup table of training inputs.
- `count-lm` (count_lm.py): a small count-based sequence model (interpolated n-gram with induction
  copying, chosen per task word on held-out examples); the strong reference for calibration.

Each has a YAML (command, manifest, initial model) next to it; `seqbench run … --algorithm exact-knn`
finds it by name. The scripts import nothing from seq.
"""
