"""Capture plane: what an episode leaves besides its row.

Runs in the worker, beside the episode loop (`seq.engine.observer` drives it): rendered frames and
mp4 recordings (`video`, drawn by `render` from a lighter model, `lod`, and encoded by `mp4`), and
per-step trajectories (`trajectory`). `observers` decides before the first episode which episodes
are captured and how. Files land under the record's artifacts folder and are named in the
episode's row (`seq.record.artifacts`).
"""
