"""Adapters that ship with seq, one file each, registered with `seq deploy FILE`. They live apart
from the benchmarks: a deployed file's folder goes on the workers' `sys.path`, where the shelf's
`libero.py` or `robosuite.py` would hide the packages of those names."""
