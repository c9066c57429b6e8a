"""Adapters that ship with seq, one file each, usable by name (`--adapter libero-to-openpi`):
the first eval that names one registers its file as `seq deploy FILE` would. They live apart
from the benchmarks: a deployed file's folder goes on the workers' `sys.path`, where the shelf's
`libero.py` or `robosuite.py` would hide the packages of those names."""
