#!/usr/bin/env bash
# A throwaway environment with LeRobot 0.4.4, its policies and its dataset reader, and seq itself
# (editable, with Push-T, ALOHA and MetaWorld): the Python that runs the built-in policy `lerobot`,
# `lerobot-eval` beside it, and the check of `seq evolve export-hard-cases --format lerobot`
# against LeRobot's reader.
#
#   bash tools/lerobot_venv.sh /tmp/seq-lerobot-venv && export SEQ_LEROBOT_PYTHON=/tmp/seq-lerobot-venv/bin/python
#
# LeRobot >= 0.5 needs Python >= 3.12; on 3.11 the newest is 0.4.4, which pins torch < 2.11 and
# torchvision < 0.26. Those pins would pull a multi-GB CUDA build from the registry; torch 2.14.1
# with torchvision 0.29.1 (TORCH, TORCHVISION) run LeRobot's policies on the CPU, so LeRobot is
# installed without its dependencies, then what its policies, `lerobot-eval` and its dataset
# reader import. (A CPU-only torch 2.13 beside PyPI's torchvision fails to import torchvision's
# operators, which ACT's and Diffusion's ResNet backbones need.)
set -euo pipefail
target=${1:-/tmp/seq-lerobot-venv}
repo=$(cd "$(dirname "$0")/.." && pwd)
torch=${TORCH:-torch==2.14.1}
torchvision=${TORCHVISION:-torchvision==0.29.1}
python3.11 -m venv "$target"
pip="$target/bin/pip"
"$pip" install -q "$torch" "$torchvision"
"$pip" install -q --no-deps lerobot==0.4.4
"$pip" install -q "diffusers>=0.27.2,<0.36" "huggingface-hub<0.36,>=0.34.2" "datasets>=4,<5" "draccus==0.10.0" \
  "accelerate>=1.10,<2" "einops>=0.8,<0.9" "deepdiff>=7.0.1,<9" pyserial safetensors "gymnasium>=1.1.1,<2" \
  jsonlines "imageio[ffmpeg]>=2.34,<3" "packaging>=24.2,<26" termcolor pillow psutil pyyaml \
  pandas pyarrow
"$pip" install -q -e "$repo[pusht,aloha,metaworld]"
echo "$target/bin/python"
