#!/usr/bin/env bash
# What a lent CUDA machine checks in one short call (docs/guides/vector.md, "GPUs"):
#   tests    the CUDA tests: the torch kernel on the GPU equals the numpy kernel step for step, and
#            the learner trains on the GPU (tests/env/test_vector_masked.py, tests/training/test_device.py);
#   engine   the batched engine's speed: the torch kernel on the GPU against the numpy kernel on
#            one core and the scalar env, in the same run (benchmarks/vector_speed.py);
#   trainer  the trainer's speed with its learner on the GPU against the same trainer on the CPU,
#            in the same run (benchmarks/train_speed.py, the long runs' 512 tables), then the GPU
#            learner on the vector collector at 4,096 and 16,384 tables.
# Usage, from the repository root, with torch and the core dependencies importable (all parts by
# default):
#   OUT=/tmp/gpu PY=python3 bash benchmarks/gpu_check.sh [tests] [engine] [trainer]
# Each part has its own time limit, so one that hangs leaves the others their time; everything
# lands in $OUT.
set -u
OUT=${OUT:-/tmp/gpu-check}
PY=${PY:-python3}
PARTS=${*:-tests engine trainer}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
wants() { [[ " $PARTS " == *" $1 "* ]]; }
speed() { timeout 240 "$PY" benchmarks/train_speed.py --config configs/all_fives.yaml --no-sb3 --no-rllib "$@"; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
"$PY" -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, torch.cuda.get_device_name())" \
    | tee -a "$OUT/gpu.txt"
nproc | sed 's/^/cpu cores: /' | tee -a "$OUT/gpu.txt"

if wants trainer; then  # the CPU learner runs beside the GPU parts: one core of many, one torch thread
    speed --steps 131072 --repeats 1 --set run.num_envs=512 >"$OUT/train_speed_cpu.txt" 2>&1 &
    cpu_trainer=$!
fi

if wants tests; then
    timeout 150 "$PY" -m pytest -p no:cacheprovider tests/env/test_vector_masked.py tests/training/test_device.py \
        -k "cuda or device" >"$OUT/tests.txt" 2>&1
    tail -n 5 "$OUT/tests.txt"
fi

if wants engine; then
    timeout 240 "$PY" benchmarks/vector_speed.py --variants classic all_fives osel metro blitz cross \
        --sizes 4096 65536 262144 --backends kernel torch --device cuda --seconds 1 --repeats 2 \
        --torch-threads 1 --csv "$OUT/vector_speed_cuda.csv" --plot "$OUT/vector_speed_cuda.png" \
        >"$OUT/vector_speed.txt" 2>&1
    tail -n 40 "$OUT/vector_speed.txt"
fi

if wants trainer; then
    wait "$cpu_trainer"
    speed --steps 131072 --repeats 1 --set run.num_envs=512 --set run.device=cuda >"$OUT/train_speed_cuda.txt" 2>&1
    for envs in 4096 16384; do
        speed --steps 2097152 --repeats 2 --no-scalar --set run.num_envs=$envs --set run.device=cuda \
            >"$OUT/train_speed_cuda_$envs.txt" 2>&1
    done
    tail -n 12 "$OUT"/train_speed_*.txt
fi
