#!/usr/bin/env bash
# Every GPU figure of the ports in one run, written to one file.
#
#     bash bench/gpu.sh [FIGURES_FILE]        (default: gpu-figures.txt)
#
# 1. MuJoCo Warp for the port: the Python that already has it ($SEQ_PORT_PYTHON, or this one),
#    else the wheels under .whl/ (a machine that cannot reach PyPI: carry them), else PyPI; on a
#    machine with no NVIDIA device or driver, one sentence and exit 1 before installing anything.
# 2. The first GPU call: Warp lists the CUDA devices. None: one sentence, exit 1, nothing else run.
# 3. robosuite's Lift scene of seeds 0-49 ($LIFT_SCENE, default .gpu/lift): exported here when
#    missing, in robosuite's image (which needs PyPI); export it beforehand for an offline machine.
# 4. bench/port.py on it: MuJoCo Warp at 1 / 64 / 1,024 worlds against classic MuJoCo on every
#    core, and seq's batched engine at 1 / 64 / 1,024 worlds (its images need PyPI).
# 5. lift-warp (examples/lift_warp.py) on its own: $LIFT_EPISODES episodes (default 300) on
#    $LIFT_WORLDS worlds (default 100), robosuite-scripted in-process: success, control steps/s.
# 6. SAPIEN's GPU PhysX replay of ManiSkill's PickCube ($PICK_SCENE, default .gpu/pick, exported
#    beforehand), where this Python has ManiSkill.
# 7. LIBERO on MuJoCo Warp: its scenes replayed on the GPU ($LIBERO_SCENE, exported beforehand:
#    `seq benchmark export libero --seeds 0-4 -o .gpu/libero`), then libero-scripted on
#    libero-warp's worlds: $LIBERO_EPISODES episodes (default 300) on $LIBERO_WORLDS worlds
#    (default 100), in-process (bench/libero_warp.py --direct): success, control steps/s.
#
# Each step's lines go to the figures file as they come; a step that fails is recorded as failed
# there and the next one runs.
set -uo pipefail

cd "$(dirname "$0")/.."
FIGURES="${1:-gpu-figures.txt}"
PYTHON="${PYTHON:-python3}"
LIFT_SCENE="${LIFT_SCENE:-.gpu/lift}"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

say() { echo "$*" | tee -a "$FIGURES"; }
step() { # step TITLE COMMAND...: run it, its output into the figures file
    local title="$1"
    shift
    say "== $title"
    "$@" 2>&1 | tee -a "$FIGURES"
    local status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] || say "(failed: exit $status)"
}

echo "bench/gpu.sh, $(date -u +%FT%TZ), $(git rev-parse --short HEAD 2>/dev/null || echo 'no git')" >"$FIGURES"

# 1. A Python with MuJoCo Warp.
if [ -z "${SEQ_PORT_PYTHON:-}" ]; then
    if ! "$PYTHON" -c "import mujoco_warp" 2>/dev/null; then
        if [ ! -e /dev/nvidia0 ] && ! nvidia-smi -L >/dev/null 2>&1; then  # nothing to install for
            say "bench/gpu.sh: no CUDA GPU was found (no NVIDIA device or driver), so no GPU figure was measured."
            exit 1
        fi
        SITE="${TMPDIR:-/tmp}/seq-gpu-site"
        if ls .whl/*.whl >/dev/null 2>&1; then
            "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl
        else
            "$PYTHON" -m pip install -q --target "$SITE" "mujoco-warp==4.0.0" "warp-lang==1.19.0" "mujoco==4.0.1" scipy
        fi || {
            say "bench/gpu.sh: could not install MuJoCo Warp into $SITE (see pip's message above)."
            exit 1
        }
        export PYTHONPATH="$PYTHONPATH:$SITE"
    fi
    export SEQ_PORT_PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)')"
fi

# 2. The first GPU call.
DEVICES="$("$SEQ_PORT_PYTHON" -c 'import warp; warp.config.quiet = True; warp.init(); print(warp.get_cuda_device_count())' 2>/dev/null | tail -n 1)"
if [ "${DEVICES:-0}" = "0" ]; then
    say "bench/gpu.sh: no CUDA GPU was found (Warp sees no CUDA device), so no GPU figure was measured."
    exit 1
fi
say "$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null)"

# 3. The scene.
if [ ! -f "$LIFT_SCENE/export.json" ]; then
    step "export robosuite's Lift, seeds 0-49, into $LIFT_SCENE" \
        "$PYTHON" bench/lift_warp.py --export-only "$LIFT_SCENE" --seeds 0-49
fi

# 4. Physics and the batched engine.
step "bench/port.py: MuJoCo Warp at 1/64/1,024 worlds vs classic MuJoCo on $(nproc) cores" \
    "$PYTHON" bench/port.py "$LIFT_SCENE" --worlds 1,64,1024 --engine-worlds 1,64,1024 \
    --engine-steps 50

# 5. lift-warp, a few hundred episodes.
WORLDS="${LIFT_WORLDS:-100}"
EPISODES="${LIFT_EPISODES:-300}"
step "lift-warp: $EPISODES episodes on $WORLDS worlds" \
    "$SEQ_PORT_PYTHON" bench/lift_warp.py --direct "$LIFT_SCENE" --seeds 0-49 \
    --trials $(((EPISODES + 49) / 50)) --worlds "$WORLDS" -o "$FIGURES.lift.json"

# 6. SAPIEN's GPU PhysX.
PICK_SCENE="${PICK_SCENE:-.gpu/pick}"
if [ -f "$PICK_SCENE/export.json" ] && "$PYTHON" -c "import mani_skill" 2>/dev/null; then
    step "SAPIEN's GPU PhysX: each PickCube start written back and replayed" \
        env SEQ_PORT_IN_IMAGE=1 "$PYTHON" -c "from seq.cli import main; main()" \
        benchmark compare --replay "$PICK_SCENE"
else
    say "== SAPIEN GPU PhysX replay: pending (needs ManiSkill in $PYTHON and $PICK_SCENE exported)"
fi

# 7. LIBERO.
LIBERO_SCENE="${LIBERO_SCENE:-.gpu/libero}"
if [ -f "$LIBERO_SCENE/export.json" ]; then
    step "LIBERO's exported starts: classic MuJoCo vs MuJoCo Warp on the GPU" \
        "$PYTHON" -c "from seq.cli import main; main()" benchmark compare --replay "$LIBERO_SCENE"
    step "libero-warp: ${LIBERO_EPISODES:-300} episodes of libero-scripted on ${LIBERO_WORLDS:-100} worlds" \
        "$SEQ_PORT_PYTHON" bench/libero_warp.py "$LIBERO_SCENE" \
        --direct --starts 1000 --episodes "${LIBERO_EPISODES:-300}" --worlds "${LIBERO_WORLDS:-100}"
else
    say "== LIBERO on the GPU (replay, episodes): pending ($LIBERO_SCENE not exported)"
fi
say "figures written to $FIGURES"
