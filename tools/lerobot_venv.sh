#!/usr/bin/env bash
# A throwaway environment with lerobot's dataset reader, to check `seq evolve export-hard-cases
# --format lerobot` against it (tests/evolve/test_metaworld_loop.py reads $SEQ_LEROBOT_PYTHON).
#
#   bash tools/lerobot_venv.sh /tmp/lerobot-venv && export SEQ_LEROBOT_PYTHON=/tmp/lerobot-venv/bin/python
#
# lerobot >= 0.5 needs Python >= 3.12; on 3.11 the newest is 0.4.4 (dataset format v3.0), which pins
# torch < 2.11 and so would pull a multi-GB CUDA build. Instead: the CPU torch wheel on disk
# (TORCH_WHEEL), lerobot without its dependencies, and only what its dataset reader imports.
set -euo pipefail
target=${1:-/tmp/lerobot-venv}
wheel=${TORCH_WHEEL:-/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl}
python3.11 -m venv "$target"
pip="$target/bin/pip"
"$pip" install -q "$wheel"
"$pip" install -q --no-deps lerobot==0.4.4 torchvision==0.28.0 accelerate
"$pip" install -q "datasets>=4,<5" "huggingface-hub<0.36" pandas pyarrow av jsonlines draccus einops \
  imageio deepdiff packaging termcolor pillow safetensors psutil pyyaml
echo "$target/bin/python"
