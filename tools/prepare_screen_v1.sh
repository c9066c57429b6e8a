#!/usr/bin/env bash
# The fixed compact screening cohort, prepared once: a half-scale build and its probes.
#   tools/prepare_screen_v1.sh [DATA_DIR=data/screen_v1]
# Then run each algorithm on it with specs/runs/full_v1.yaml (one --tasks per file below) and
# compare with: seqbench screen specs/screens/screen_v1.yaml --candidate RUN… --baseline RUN --output DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="${1:-data/screen_v1}"
"$here/prepare_causal_v2.sh" "$data" 0.5
