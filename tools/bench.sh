#!/usr/bin/env bash
# Benchmarks of opconform's bundled backends (docs/performance.md).
#
#   bash tools/bench.sh [--reps N] [--quick] [--no-peers] [--no-vulkan] [--runner]
#
# 1. builds `opconform-bench` (release) and runs `opconform-bench cpu`: it writes the inputs
#    as .npy files into a temporary folder, measures the memory bandwidth (large memcpy),
#    and times the CPU backend through `Backend::execute` on every row;
# 2. runs tools/bench_peers.py on the same files: numpy and ONNX Runtime single-op sessions;
# 3. prints the table (medians, ratios ours/numpy, ours/ORT, ours/floor) and writes it to
#    target/bench/table.md;
# 4. unless --no-vulkan: one large case per operator on the Vulkan backend against the CPU
#    backend (lavapipe when there is no GPU), target/bench/vulkan.md;
# 5. with --runner: the whole conformance suite in release under /usr/bin/time -v (cases per
#    second, peak memory), target/bench/runner.txt.
#
# Environment: PYTHON (default .venv/bin/python, else python3), OPCONFORM_BENCH_DATA (keep the
# .npy files there instead of a temporary folder), XDG_RUNTIME_DIR (set to a temporary folder
# when unset, as the Vulkan loader wants one).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

reps=7
quick=()
peers=1
vulkan=1
runner=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --reps) reps="$2"; shift 2 ;;
        --quick) quick=(--quick); reps=3; shift ;;
        --no-peers) peers=0; shift ;;
        --no-vulkan) vulkan=0; shift ;;
        --runner) runner=1; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

out="$root/target/bench"
mkdir -p "$out"

# --- Build -----------------------------------------------------------------------------------
if cargo metadata --no-deps --format-version 1 2>/dev/null | grep -q '"name":"opconform-bench"'; then
    cargo build --release --quiet -p opconform-bench
    bench="$root/target/release/opconform-bench"
else
    # Not (yet) a workspace member: build it from a throwaway workspace that points at
    # bench/src and the backends by absolute path.
    ws="$root/target/bench-standalone"
    mkdir -p "$ws"
    {
        printf '[workspace]\n\n[workspace.package]\n'
        sed -n '/^\[workspace.package\]/,/^$/p' Cargo.toml | tail -n +2
        sed -e "s#path = \"\\.\\./#path = \"$root/#" bench/Cargo.toml
        printf '\n[[bin]]\nname = "opconform-bench"\npath = "%s/bench/src/main.rs"\n' "$root"
    } > "$ws/Cargo.toml.new"
    if ! cmp -s "$ws/Cargo.toml.new" "$ws/Cargo.toml"; then
        mv "$ws/Cargo.toml.new" "$ws/Cargo.toml"
        cp Cargo.lock "$ws/Cargo.lock"
    else
        rm "$ws/Cargo.toml.new"
    fi
    (cd "$ws" && cargo build --release --quiet)
    bench="$ws/target/release/opconform-bench"
fi

# --- CPU backend, numpy, ONNX Runtime -------------------------------------------------------
if [[ -n "${OPCONFORM_BENCH_DATA:-}" ]]; then
    data="$OPCONFORM_BENCH_DATA"
    mkdir -p "$data"
else
    data="$(mktemp -d "${TMPDIR:-/tmp}/opconform-bench.XXXXXX")"
    trap 'rm -rf "$data"' EXIT
fi

echo "== CPU backend (inputs in $data)" >&2
"$bench" cpu --data "$data" --out "$out/ours.json" --reps "$reps" "${quick[@]}"

peers_args=()
if [[ $peers == 1 ]]; then
    python="${PYTHON:-}"
    if [[ -z "$python" ]]; then
        if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
    fi
    if "$python" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
        echo "== numpy and ONNX Runtime ($python)" >&2
        "$python" tools/bench_peers.py --ours "$out/ours.json" --data "$data" \
            --out "$out/peers.json" --reps "$reps"
        peers_args=(--peers "$out/peers.json")
    else
        echo "== peers skipped: $python lacks numpy/onnx/onnxruntime" \
            "(pip install -r tools/requirements-adapters.txt)" >&2
    fi
fi
# The inputs are no longer needed: free the space before the Vulkan run.
[[ -z "${OPCONFORM_BENCH_DATA:-}" ]] && rm -rf "$data"

echo
echo "== CPU backend against numpy, ONNX Runtime and the bandwidth floor"
"$bench" report --ours "$out/ours.json" "${peers_args[@]}" --markdown "$out/table.md"

# --- Vulkan ---------------------------------------------------------------------------------
if [[ $vulkan == 1 ]]; then
    if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
        export XDG_RUNTIME_DIR="$(mktemp -d "${TMPDIR:-/tmp}/xdg.XXXXXX")"
    fi
    echo
    echo "== Vulkan backend against the CPU backend"
    if ! "$bench" vulkan --reps "$(( reps < 3 ? reps : 3 ))" "${quick[@]}" \
        --out "$out/vulkan.json" --markdown "$out/vulkan.md"; then
        echo "(Vulkan benchmark skipped: no usable Vulkan device)"
    fi
fi

# --- Runner throughput ----------------------------------------------------------------------
if [[ $runner == 1 ]]; then
    echo
    echo "== Conformance suite in release (runner throughput)"
    cargo build --release --quiet
    report_dir="$(mktemp -d "${TMPDIR:-/tmp}/opconform-runner.XXXXXX")"
    start=$(date +%s.%N)
    /usr/bin/time -v ./target/release/opconform run --report-dir "$report_dir" \
        > "$out/runner-stdout.txt" 2> "$out/runner.txt" || true
    end=$(date +%s.%N)
    cases=$(grep -c . "$report_dir/results.jsonl" 2>/dev/null || echo 0)
    wall=$(echo "$end - $start" | bc)
    peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/runner.txt")
    printf 'cases %s, wall %.2f s, %.0f cases/s, peak RSS %.0f MiB\n' \
        "$cases" "$wall" "$(echo "$cases / $wall" | bc -l)" "$(echo "${peak:-0} / 1024" | bc -l)"
    rm -rf "$report_dir"
fi

echo
echo "results: $out (ours.json, peers.json, table.md, vulkan.md)"
