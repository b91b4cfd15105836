#!/usr/bin/env bash
# The CPU benchmark of docs/performance.md, in one command:
#
#   bash tools/bench.sh [--runs N] [--reps N] [--quick] [--only TEXT] [--no-doc] [--vulkan]
#                       [--load] [--sweep SEED]...
#
# 1. builds libopconform_bench.so (the `opconform-bench` crate, release);
# 2. runs tools/bench_peers.py `run` N times (default 3): each run times our CPU backend (through
#    the library's C ABI), numpy and ONNX Runtime in one Python process, calls interleaved, on
#    1 thread each side and on all cores, measures the read and write bandwidth for the floor
#    (at the start of every round of every row; each row's floor is from its own best),
#    and checks that every row's results are equal; target/bench/run-K.json;
# 3. `report` merges the runs (medians over runs, spread of ours) into target/bench/results.json
#    and target/bench/table.md, and rewrites the generated part of docs/performance.md
#    (between its `bench_peers.py report` markers) unless --no-doc or --only;
# 4. with --vulkan: one large case per operator on the Vulkan backend against the CPU backend
#    (lavapipe when there is no GPU), target/bench/vulkan.md (not part of the table);
# 5. with --load: loading speed. A synthetic suite of 50 000 cases (the repository's case files
#    copied with renamed ids into a temporary folder, deleted after) and 5 000 and 20 000 for
#    the scaling, each timed through `opconform validate -q` (release), target/bench/load.txt;
# 6. with --sweep SEED (repeatable): 40 random rows per seed (operator, type, rank, sizes, layout,
#    axes, density, depth; `bench_peers.py sweep`), per core, worst first, results checked,
#    target/bench/sweep-SEED.md. Shapes the fixed rows do not have: a check of the class.
#
# Exits non-zero when a run fails or when any row's results differ between ours and a peer.
# Environment: PYTHON (default .venv/bin/python, else python3; needs numpy, onnx, onnxruntime:
# tools/requirements-adapters.txt).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

runs=3
reps=6
quick=()
only=()
doc=1
vulkan=0
load=0
sweeps=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --reps) reps="$2"; shift 2 ;;
        --quick) quick=(--quick); doc=0; shift ;;
        --only) only=(--only "$2"); doc=0; shift 2 ;;
        --no-doc) doc=0; shift ;;
        --vulkan) vulkan=1; shift ;;
        --load) load=1; shift ;;
        --sweep) sweeps+=("$2"); shift 2 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
if ! "$python" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
    echo "bench.sh: $python lacks numpy/onnx/onnxruntime (pip install -r tools/requirements-adapters.txt)" >&2
    exit 2
fi

out="$root/target/bench"
mkdir -p "$out"
rm -f "$out"/run-*.json

echo "== building libopconform_bench.so (release)" >&2
cargo build --release --quiet -p opconform-bench
lib="$root/target/release/libopconform_bench.so"

started=$(date +%s)
files=()
for ((k = 1; k <= runs; k++)); do
    echo "== run $k of $runs" >&2
    "$python" tools/bench_peers.py run --lib "$lib" --out "$out/run-$k.json" \
        --reps "$reps" "${quick[@]}" "${only[@]}"
    files+=("$out/run-$k.json")
done
echo "== $runs run(s) in $(( $(date +%s) - started )) s" >&2

doc_args=()
[[ $doc == 1 ]] && doc_args=(--doc docs/performance.md)
status=0
if [[ $runs -gt 0 ]]; then  # --runs 0: only the extras (--sweep, --load, --vulkan)
    "$python" tools/bench_peers.py report "${files[@]}" --json "$out/results.json" \
        --markdown "$out/table.md" "${doc_args[@]}" || status=$?
fi

if [[ $vulkan == 1 ]]; then
    if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
        export XDG_RUNTIME_DIR="$(mktemp -d "${TMPDIR:-/tmp}/xdg.XXXXXX")"
    fi
    echo "== Vulkan backend against the CPU backend" >&2
    cargo build --release --quiet -p opconform-bench
    "$root/target/release/opconform-bench" vulkan --reps 3 "${quick[@]}" \
        --out "$out/vulkan.json" --markdown "$out/vulkan.md" \
        || echo "(Vulkan benchmark skipped: no usable Vulkan device)" >&2
fi

if [[ $load == 1 ]]; then
    echo "== loading speed (synthetic suites, opconform validate -q)" >&2
    cargo build --release --quiet --bin opconform
    suites="$(mktemp -d "${TMPDIR:-/tmp}/opconform-load.XXXXXX")"
    : > "$out/load.txt"
    for count in 5000 20000 50000; do
        "$python" - "$suites/$count" "$count" <<'PY'
import glob, os, re, sys
folder, target = sys.argv[1], int(sys.argv[2])
os.makedirs(folder)
files = [(p, open(p, encoding="utf-8").read()) for p in sorted(glob.glob("cases/**/*.yaml", recursive=True))]
files = [(p, t) for p, t in files if re.search(r"^  - id: ", t, re.M)]
made = copy = 0
while made < target:
    for path, text in files:
        renamed = re.sub(r"^  - id: (\S+)", lambda m: f"  - id: {m.group(1)}_copy{copy}", text, flags=re.M)
        with open(os.path.join(folder, f"{copy:05d}_{os.path.basename(path)}"), "w", encoding="utf-8") as f:
            f.write(renamed)
        made += len(re.findall(r"^  - id: ", text, re.M))
        copy += 1
        if made >= target:
            break
PY
        /usr/bin/time -f "%e s wall, %U s user, %M KiB peak" -o "$suites/time" \
            "$root/target/release/opconform" validate -q "$suites/$count" > "$suites/stdout" || true
        echo "$(tail -1 "$suites/stdout"): $(cat "$suites/time")" | tee -a "$out/load.txt"
    done
    rm -rf "$suites"
fi

for seed in "${sweeps[@]}"; do
    echo "== sweep, seed $seed" >&2
    "$python" tools/bench_peers.py sweep --lib "$lib" --seed "$seed" \
        --out "$out/sweep-$seed.json" > "$out/sweep-$seed.md" || status=1
    tail -1 "$out/sweep-$seed.md" >&2
done

echo "results: $out (run-*.json, results.json, table.md)" >&2
exit "$status"
