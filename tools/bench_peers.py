#!/usr/bin/env python3
"""Times numpy and ONNX Runtime on the inputs of opconform's CPU benchmark.

`opconform-bench cpu` writes the inputs as .npy files and a results document whose
`manifest` lists the rows; this script reads both, times each row with numpy and with a
single-operator ONNX Runtime session (CPU execution provider, one thread per core), checks
their results against ours (ArgMax exactly, NonZeroCoordinates by count and an order-sensitive
digest, OneHot by the on-value count and the sum of their flat indices), and writes JSON for
`opconform-bench report`.

    python3 tools/bench_peers.py --ours OURS.json --data DIR --out PEERS.json [--reps N]

Run by tools/bench.sh (see docs/performance.md). Needs numpy, onnx and onnxruntime
(tools/requirements-adapters.txt).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

U64 = np.uint64


def time_ms(fn, reps: int, warmup: int = 1) -> list[float]:
    """Runs fn warmup times untimed, then reps times timed; returns milliseconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(max(reps, 1)):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def summary(times: list[float], **extra) -> dict:
    return {"times_ms": times, "median_ms": statistics.median(times), **extra}


def session(node: onnx.NodeProto, inputs, outputs, opset: int = 13) -> ort.InferenceSession:
    """A session running the single node `node` on the CPU, with one thread per core."""
    graph = helper.make_graph([node], "bench", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def ort_runner(sess: ort.InferenceSession, feeds: dict, outputs: dict):
    """A closure running `sess` through IO binding: inputs bound once (no copy), each output
    bound to a preallocated array when given one, else left to ONNX Runtime to allocate."""
    binding = sess.io_binding()
    for name, array in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array))
    for name, array in outputs.items():
        if array is None:
            binding.bind_output(name, "cpu")
        else:
            binding.bind_ortvalue_output(name, ort.OrtValue.ortvalue_from_numpy(array))

    def run():
        sess.run_with_iobinding(binding)

    def result(index: int = 0) -> np.ndarray:
        return binding.get_outputs()[index].numpy()

    return run, result


def onnx_type(dtype: np.dtype) -> int:
    return {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}[
        np.dtype(dtype)
    ]


def bench_argmax(row: dict, a: np.ndarray, data: str, reps: int) -> dict:
    axis = row["axes"]  # an int, or None for every axis (the flattened tensor)
    ours = np.load(os.path.join(data, row["ours"]))
    result = {}
    out_holder = {}

    def numpy_argmax():
        out_holder["r"] = np.argmax(a, axis=axis)

    result["numpy"] = summary(time_ms(numpy_argmax, reps), variant="np.argmax")
    expected = np.asarray(out_holder["r"]).reshape(-1).astype(np.int64)
    checks = {"numpy": "ok" if np.array_equal(expected, ours) else "ours differs from numpy"}

    x = a if axis is not None else a.reshape(-1)
    ort_axis = axis if axis is not None else 0
    out_shape = list(x.shape)
    out_shape[ort_axis] = 1
    try:
        node = helper.make_node("ArgMax", ["x"], ["y"], axis=ort_axis, keepdims=1)
        sess = session(
            node,
            [helper.make_tensor_value_info("x", onnx_type(x.dtype), list(x.shape))],
            [helper.make_tensor_value_info("y", TensorProto.INT64, out_shape)],
        )
        run, get = ort_runner(sess, {"x": x}, {"y": np.empty(out_shape, np.int64)})
        result["ort"] = summary(time_ms(run, reps), variant="ArgMax, IO binding")
        same = np.array_equal(get().reshape(-1), expected)
        checks["ort"] = "ok" if same else "ONNX Runtime differs from numpy"
    except Exception as e:  # noqa: BLE001 - report any peer failure in the table
        result["ort"] = {"error": str(e)}
        checks["ort"] = f"error: {e}"
    result["check"] = checks
    return result


def flat_digest(flat: np.ndarray) -> int:
    """Wrapping sum over rows r of (r + 1) * flat[r], as the Rust side computes it."""
    flat = flat.astype(U64)
    weights = np.arange(1, flat.size + 1, dtype=U64)
    return int(np.sum(flat * weights, dtype=U64))


def bench_nonzero(row: dict, a: np.ndarray, ours: dict, reps: int) -> dict:
    result = {}
    holder = {}

    def numpy_nonzero():
        coordinates = np.argwhere(a)
        holder["r"] = (coordinates, coordinates.shape[0])

    result["numpy"] = summary(time_ms(numpy_nonzero, reps), variant="np.argwhere")
    coordinates, count = holder.pop("r")
    flat = np.ravel_multi_index(coordinates.T, a.shape)
    del coordinates
    digest = flat_digest(flat)
    del flat
    checks = {}
    agree = count == ours["count"] and str(digest) == ours["digest"]
    checks["numpy"] = "ok" if agree else f"count {ours['count']} vs numpy {count}, digests differ"

    try:
        node = helper.make_node("NonZero", ["x"], ["y"])
        sess = session(
            node,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(a.shape))],
            [helper.make_tensor_value_info("y", TensorProto.INT64, [a.ndim, None])],
        )
        run, get = ort_runner(sess, {"x": a}, {"y": None})
        result["ort"] = summary(time_ms(run, reps), variant="NonZero, IO binding")
        y = get()
        same = y.shape[1] == count and flat_digest(np.ravel_multi_index(tuple(y), a.shape)) == digest
        checks["ort"] = "ok" if same else f"ONNX Runtime count {y.shape[1]} / digest differ"
        del y
    except Exception as e:  # noqa: BLE001
        result["ort"] = {"error": str(e)}
        checks["ort"] = f"error: {e}"
    result["check"] = checks
    return result


def bench_one_hot(row: dict, idx: np.ndarray, ours: dict, reps: int) -> dict:
    depth = int(row["depth"])
    n = idx.shape[0]
    rows = np.arange(n)
    on_count = n
    on_flat_sum = int(np.sum(rows.astype(U64) * U64(depth) + idx.astype(U64), dtype=U64))
    result = {}
    holder = {}

    def numpy_full():
        out = np.full((n, depth), 0.0, dtype=np.float32)
        out[rows, idx] = 1.0
        holder["r"] = out

    full = time_ms(numpy_full, reps)
    out = holder.pop("r")

    def numpy_prealloc():
        out.fill(0.0)
        out[rows, idx] = 1.0

    prealloc = time_ms(numpy_prealloc, reps)
    numpy_ok = int(np.count_nonzero(out)) == on_count and int(
        np.sum(np.flatnonzero(out).astype(U64), dtype=U64)
    ) == on_flat_sum
    del out
    variants = {
        "np.full + fancy index": summary(full),
        "preallocated fill + fancy index": summary(prealloc),
    }
    best = min(variants, key=lambda k: variants[k]["median_ms"])
    result["numpy"] = {**variants[best], "variant": best, "variants": variants}
    agree = ours["on"] == on_count and ours["on_flat_sum"] == str(on_flat_sum) and ours["other"] == 0
    checks = {"numpy": "ok" if agree and numpy_ok else "one-hot digests differ"}

    try:
        # OneHot's CPU kernel exists for (int32 indices, float values, int32 or float depth).
        node = helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=-1)
        sess = session(
            node,
            [
                helper.make_tensor_value_info("i", TensorProto.INT32, [n]),
                helper.make_tensor_value_info("d", TensorProto.INT32, [1]),
                helper.make_tensor_value_info("v", TensorProto.FLOAT, [2]),
            ],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, depth])],
        )
        y = np.empty((n, depth), np.float32)
        feeds = {
            "i": idx,
            "d": np.array([depth], np.int32),
            "v": np.array([0.0, 1.0], np.float32),
        }
        run, get = ort_runner(sess, feeds, {"y": y})
        result["ort"] = summary(time_ms(run, reps), variant="OneHot, IO binding")
        got = get()
        same = int(np.count_nonzero(got)) == on_count and int(
            np.sum(np.flatnonzero(got).astype(U64), dtype=U64)
        ) == on_flat_sum
        checks["ort"] = "ok" if same else "ONNX Runtime one-hot differs"
        del got, y
    except Exception as e:  # noqa: BLE001
        result["ort"] = {"error": str(e)}
        checks["ort"] = f"error: {e}"
    result["check"] = checks
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", required=True, help="results of `opconform-bench cpu`")
    parser.add_argument("--data", required=True, help="the .npy folder it wrote")
    parser.add_argument("--out", required=True, help="where to write the peers' results")
    parser.add_argument("--reps", type=int, help="timed runs per row (default: as ours)")
    parser.add_argument("--only", help="run only rows whose id contains this text")
    args = parser.parse_args()

    with open(args.ours, encoding="utf-8") as f:
        ours = json.load(f)
    reps = args.reps or int(ours.get("reps", 7))
    our_rows = {r["id"]: r for r in ours["rows"]}
    rows = []
    loaded: dict[str, np.ndarray] = {}
    for row in ours["manifest"]:
        if args.only and args.only not in row["id"]:
            continue
        if row["input"] not in loaded:
            loaded.clear()
            gc.collect()
            loaded[row["input"]] = np.load(os.path.join(args.data, row["input"]))
        a = loaded[row["input"]]
        check = our_rows[row["id"]]["check"]
        if row["op"] == "argmax":
            result = bench_argmax(row, a, args.data, reps)
        elif row["op"] == "nonzero":
            result = bench_nonzero(row, a, check, reps)
        elif row["op"] == "one_hot":
            result = bench_one_hot(row, a, check, reps)
        else:
            raise SystemExit(f"unknown op {row['op']}")
        result["id"] = row["id"]
        line = f"  {row['label']:<48}"
        for peer in ("numpy", "ort"):
            median = result[peer].get("median_ms")
            line += f"  {peer} " + (f"{median:9.2f} ms" if median is not None else "   error   ")
        print(line, file=sys.stderr, flush=True)
        rows.append(result)
        gc.collect()

    doc = {
        "numpy": np.__version__,
        "onnxruntime": ort.__version__,
        "threads": os.cpu_count(),
        "reps": reps,
        "rows": rows,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
