#!/usr/bin/env bash
# The causal v2 suite in one command: base rows, oracle rows, and every materialized probe.
#   tools/prepare_causal_v2.sh [DATA_DIR=data] [SCALE=1.0]
# Then: seqbench run specs/runs/causal_v2.yaml --algorithm ALGO --tasks DATA_DIR/full.csv \
#         --tasks DATA_DIR/nonce.csv --tasks DATA_DIR/nonce-counterfactual.csv --output runs/NAME
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="${1:-data}"
scale="${2:-1.0}"
python="${PYTHON:-python}"
mkdir -p "$data"
"$python" "$here/build_csv.py" "$data/full.csv" --scale "$scale"
"$python" "$here/build_csv.py" "$data/oracle.csv" --variant oracle --scale "$scale"
"$python" "$here/materialize_nonce.py" "$data/full.csv" "$data/nonce.csv" --seed 42
"$python" "$here/materialize_counterfactual.py" "$data/nonce.csv" "$data/nonce-counterfactual.csv"
"$python" "$here/materialize_noise.py" "$data/full.csv" "$data/noise.csv" --seed 42
"$python" "$here/materialize_supervision.py" "$data/full.csv" "$data/supervision.csv"
