#!/usr/bin/env python3
"""The CPU benchmark: opconform's CPU backend against numpy and ONNX Runtime, in one process.

`run` loads libopconform_bench.so (the `opconform-bench` crate built as a C library) with
ctypes, so that our kernels, numpy and single-operator ONNX Runtime sessions are timed in the
same process on the same inputs, calls interleaved (the order rotates every repetition). It
measures the memory bandwidth in the same run for the floor of each row: input bytes / read
bandwidth + output bytes / write bandwidth, the bandwidth being the best measured at the start
of each of the row's rounds (and, for reference, at the start and end of the run), the write
both as a fill and as copies of a sample of the row's own output. Every row runs in two sets:
one thread each side ("per core": ours on a 1-thread pool, ONNX Runtime with one intra-op
thread, numpy single-threaded anyway) and all cores. Every row checks that the results are equal.

`report` merges several runs (medians of the per-run medians, with the spread of ours) into
the Markdown tables of docs/performance.md.

    python3 tools/bench_peers.py run --lib target/release/libopconform_bench.so --out RUN.json
        [--reps N] [--only TEXT] [--quick]
    python3 tools/bench_peers.py report RUN.json... [--markdown FILE] [--doc docs/performance.md]

Run by tools/bench.sh. Needs numpy, onnx and onnxruntime (tools/requirements-adapters.txt).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import itertools
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

# --- Our library -----------------------------------------------------------------------------


_size, _void_p, _double_p = ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)

# The C ABI of libopconform_bench.so (bench/src/ffi.rs): name -> (return type, argument types).
SIGNATURES = {
    "ocb_case_new": (_void_p, [ctypes.c_char_p, ctypes.POINTER(_void_p), ctypes.POINTER(_size), _size]),
    "ocb_case_run": (ctypes.c_double, [_void_p, _size, _size]),
    "ocb_case_output_len": (ctypes.c_ssize_t, [_void_p, _size]),
    "ocb_case_output": (ctypes.c_ssize_t, [_void_p, _size, _void_p, _size]),
    "ocb_case_input": (ctypes.c_ssize_t, [_void_p, _size, ctypes.POINTER(_void_p)]),
    "ocb_case_free": (None, [_void_p]),
    "ocb_bandwidth": (ctypes.c_int, [_size, _size, _size, _double_p]),
    "ocb_write_bandwidth_of": (ctypes.c_int, [_size, _size, _size, _void_p, _size, _double_p]),
    "ocb_last_error": (_size, [ctypes.c_char_p, _size]),
    "ocb_isa": (ctypes.c_char_p, []),
}


class Ours:
    """The C ABI of libopconform_bench.so (bench/src/ffi.rs)."""

    def __init__(self, path: str):
        lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in SIGNATURES.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        self.lib = lib

    def error(self) -> str:
        buf = ctypes.create_string_buffer(1024)
        self.lib.ocb_last_error(buf, 1024)
        return buf.value.decode("utf-8", "replace")

    def case(self, spec: dict, buffers: list[np.ndarray]) -> "Case":
        arrays = [np.ascontiguousarray(b).reshape(-1).view(np.uint8) for b in buffers]
        ptrs = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
        lens = (ctypes.c_size_t * len(arrays))(*[a.nbytes for a in arrays])
        handle = self.lib.ocb_case_new(json.dumps(spec).encode(), ptrs, lens, len(arrays))
        if not handle:
            raise RuntimeError(f"ocb_case_new: {self.error()}")
        return Case(self, handle)

    def bandwidth(self, threads: int, nbytes: int, reps: int) -> tuple[float, float]:
        out = (ctypes.c_double * 2)()
        if self.lib.ocb_bandwidth(threads, nbytes, reps, out) != 0:
            raise RuntimeError(f"ocb_bandwidth: {self.error()}")
        return out[0], out[1]

    def write_bandwidth_of(self, threads: int, nbytes: int, reps: int, sample: np.ndarray) -> float:
        """GB/s writing copies of `sample` (uint8, contiguous) over an `nbytes` buffer."""
        out = (ctypes.c_double * 1)()
        if self.lib.ocb_write_bandwidth_of(threads, nbytes, reps, sample.ctypes.data, sample.size, out) != 0:
            raise RuntimeError(f"ocb_write_bandwidth_of: {self.error()}")
        return out[0]

    def isa(self) -> str:
        return self.lib.ocb_isa().decode()


class Case:
    """One operator of ours with its inputs and reused outputs."""

    def __init__(self, ours: Ours, handle: int):
        self.ours, self.handle = ours, handle

    def run(self, threads: int, iterations: int = 1) -> float:
        """Seconds for `iterations` runs on a `threads`-thread pool (timed inside Rust)."""
        seconds = self.ours.lib.ocb_case_run(self.handle, threads, iterations)
        if seconds < 0:
            raise RuntimeError(f"ocb_case_run: {self.ours.error()}")
        return seconds

    def output(self, index: int) -> np.ndarray:
        n = self.ours.lib.ocb_case_output_len(self.handle, index)
        out = np.empty(n, np.uint8)
        if self.ours.lib.ocb_case_output(self.handle, index, out.ctypes.data, n) != n:
            raise RuntimeError(f"ocb_case_output: {self.ours.error()}")
        return out

    def inputs_like(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """Read-only arrays over our own input buffers, each shaped and typed as `buffers[i]`
        (the arrays the case was built from). Valid until `free`.

        A view's buffer ends at its last element (ocb_case_new drops the rest of the base, such
        as the padding after a padded tensor's last row): it comes back as its bytes, which
        `rebase` takes views of all the same."""
        shared = []
        for i, like in enumerate(buffers):
            at = ctypes.c_void_p()
            n = self.ours.lib.ocb_case_input(self.handle, i, ctypes.byref(at))
            if n < 0 or not like.flags.c_contiguous:
                raise RuntimeError(f"ocb_case_input {i}: {self.ours.error() if n < 0 else 'not contiguous'}")
            length = min(n, like.nbytes)
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * length).from_address(at.value)) if length else np.empty(0, np.uint8)
            array = raw.view(like.dtype).reshape(like.shape) if length == like.nbytes else raw
            array.flags.writeable = False
            shared.append(array)
        return shared

    def free(self):
        if self.handle:
            self.ours.lib.ocb_case_free(self.handle)
            self.handle = None


# --- ONNX Runtime ------------------------------------------------------------------------------

ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint8): TensorProto.UINT8,
}


def ort_session(nodes, inputs, outputs, threads: int, initializers=()) -> ort.InferenceSession:
    """A CPU session of the graph `nodes` with `threads` intra-op threads."""
    graph = helper.make_graph(nodes, "bench", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 9)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Without this, the pool's threads spin for tens of milliseconds after every call, and on
    # a 2-core machine the contender timed next (interleaved) loses a core to them: ours ran
    # at half speed after ONNX Runtime. Measured here, ONNX Runtime's own times do not change.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def info(name: str, array_or_type, shape) -> onnx.ValueInfoProto:
    elem = ONNX_TYPES[np.dtype(array_or_type)] if not isinstance(array_or_type, int) else array_or_type
    return helper.make_tensor_value_info(name, elem, shape)


class OrtRunner:
    """A session run through IO binding: inputs bound once (no copy), outputs left to ONNX
    Runtime to allocate (their sizes may depend on the data)."""

    def __init__(self, session: ort.InferenceSession, feeds: dict[str, np.ndarray]):
        self.binding = session.io_binding()
        self.session = session
        for name, array in feeds.items():
            self.binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array))
        for out in session.get_outputs():
            self.binding.bind_output(out.name, "cpu")

    def __call__(self):
        self.session.run_with_iobinding(self.binding)

    def result(self) -> np.ndarray:
        return self.binding.get_outputs()[0].numpy()


# --- Rows --------------------------------------------------------------------------------------


@dataclass
class Row:
    """One benchmark row: our case, numpy's and ONNX Runtime's ways, and the check."""

    id: str
    label: str
    spec: dict
    buffers: list
    numpy: Callable[[], object]
    # (threads) -> OrtRunner, or None when ONNX Runtime has no such operator.
    ort: Callable[[int], OrtRunner] | None
    # Our outputs (uint8 arrays) and numpy's result -> None when equal, else what differs.
    check_ours: Callable[[list, object], str | None]
    # ONNX Runtime's result and numpy's -> None when equal.
    check_ort: Callable[[np.ndarray, object], str | None]
    bytes_read: int
    bytes_written: int
    contiguous: bool = True
    # Calls per timing (latency rows time many calls and report one).
    iterations: int = 1
    notes: list = field(default_factory=list)
    # The same row over other input buffers (same shapes and types): `sharing` uses it to
    # point the peers at our own copy, so every contender reads one array.
    rebuild: Callable[[list], "Row"] | None = None


def rebase(view: np.ndarray, base: np.ndarray, other: np.ndarray) -> np.ndarray:
    """`view`'s window (offset, shape, strides) of `base`, taken of `other` instead."""
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return np.ndarray(view.shape, view.dtype, buffer=other, offset=offset, strides=view.strides)


def sharing(row: Row, case: Case) -> Row:
    """The row with its peers reading our case's input buffers in place.

    Our case holds a copy of the inputs. Were the peers to read the original, they would
    share one array between them while ours reads another: in a loop of interleaved calls
    the shared array stays warm in the last-level cache and ours is the one evicted, which
    favoured the peers by up to 1.9x on 4-30 MB inputs. One array for every contender takes
    the cache out of the comparison."""
    return row.rebuild(case.inputs_like(row.buffers))


def equal(a, b, what: str) -> str | None:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"{what}: shape {a.shape} vs {b.shape}"
    if not np.array_equal(a, b):
        first = int(np.argmax(a.reshape(-1) != b.reshape(-1)))
        return f"{what}: differs first at flat {first}"
    return None


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_array(dtype, shape, seed: int) -> np.ndarray:
    g = rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return g.random(shape, dtype=np.float32) * 2 - 1
    if dtype == np.float16:
        return (g.random(shape, dtype=np.float32) * 2 - 1).astype(np.float16)
    info_ = np.iinfo(dtype)
    return g.integers(info_.min, info_.max, size=shape, dtype=dtype, endpoint=True)


DTYPE_NAMES = {
    np.dtype(np.float32): "FLOAT32",
    np.dtype(np.float16): "FLOAT16",
    np.dtype(np.int32): "INT32",
    np.dtype(np.int64): "INT64",
    np.dtype(np.uint8): "UINT8",
}


def argmax_row(
    id_: str,
    label: str,
    base: np.ndarray,
    view: np.ndarray,
    axes: tuple[int, ...],
    contiguous: bool,
    iterations: int = 1,
) -> Row:
    """ArgMax over `axes` of `view` (a view of `base`, whose buffer is ours), INT64 output.

    numpy: np.argmax over one axis (or the flattened tensor for all of them); several axes
    are moved last and merged first (a copy). ONNX Runtime: the contiguous logical tensor,
    Transpose + Reshape where several axes are reduced, then ArgMax (select_last_index 0)."""
    rank = view.ndim
    item = view.itemsize
    strides = [s // item for s in view.strides]
    spec = {
        "op": "argmax",
        "dtype": DTYPE_NAMES[view.dtype],
        "sizes": list(view.shape),
        "strides": strides,
        "axes": list(axes),
        "out_dtype": "INT64",
    }
    kept = [d for d in range(rank) if d not in axes]
    kept_shape = [view.shape[d] for d in kept]
    reduced_count = int(np.prod([view.shape[d] for d in axes]))

    if len(axes) == rank:

        def numpy_fn():
            return np.argmax(view)

    elif len(axes) == 1:

        def numpy_fn():
            return np.argmax(view, axis=axes[0])

    else:

        def numpy_fn():
            moved = np.transpose(view, kept + list(axes)).reshape(kept_shape + [reduced_count])
            return np.argmax(moved, axis=-1)

    def ort_fn(threads: int) -> OrtRunner:
        logical = np.ascontiguousarray(view)
        nodes, inits = [], []
        x = "x"
        if len(axes) > 1 and len(axes) < rank:
            nodes.append(helper.make_node("Transpose", ["x"], ["t"], perm=kept + list(axes)))
            shape = np.array(kept_shape + [reduced_count], np.int64)
            inits.append(numpy_helper.from_array(shape, "shape"))
            nodes.append(helper.make_node("Reshape", ["t", "shape"], ["r"]))
            x, axis = "r", len(kept)
            feed = logical
        elif len(axes) == rank:
            feed = logical.reshape(-1)
            axis = 0
        else:
            feed = logical
            axis = axes[0]
        nodes.append(helper.make_node("ArgMax", [x], ["y"], axis=axis, keepdims=0))
        session = ort_session(
            nodes,
            [info("x", feed.dtype, list(feed.shape))],
            [info("y", TensorProto.INT64, None)],
            threads,
            inits,
        )
        return OrtRunner(session, {"x": feed})

    def check_ours(outputs, expected):
        return equal(outputs[0].view(np.int64), np.asarray(expected).reshape(-1), "ours vs numpy")

    def check_ort(result, expected):
        return equal(result.reshape(-1), np.asarray(expected).reshape(-1), "ORT vs numpy")

    outputs = int(np.prod(kept_shape)) if kept_shape else 1
    return Row(
        id_,
        label,
        spec,
        [base],
        numpy_fn,
        ort_fn,
        check_ours,
        check_ort,
        bytes_read=view.size * item,
        bytes_written=outputs * 8,
        contiguous=contiguous,
        iterations=iterations,
        rebuild=lambda bufs: argmax_row(
            id_, label, bufs[0], rebase(view, base, bufs[0]), axes, contiguous, iterations
        ),
    )


def nonzero_row(id_: str, label: str, a: np.ndarray, iterations: int = 1) -> Row:
    """NonZeroCoordinates (UINT32 count and rows) against np.nonzero and ONNX NonZero."""
    spec = {"op": "nonzero", "dtype": DTYPE_NAMES[a.dtype], "sizes": list(a.shape)}
    count = int(np.count_nonzero(a))

    def numpy_fn():
        return np.nonzero(a)

    def ort_fn(threads: int) -> OrtRunner:
        session = ort_session(
            [helper.make_node("NonZero", ["x"], ["y"])],
            [info("x", a.dtype, list(a.shape))],
            [info("y", TensorProto.INT64, None)],
            threads,
        )
        return OrtRunner(session, {"x": a})

    def check_ours(outputs, expected):
        ours_count = int(outputs[0][:4].view(np.uint32)[0])
        if ours_count != expected[0].size:
            return f"ours count {ours_count} vs numpy {expected[0].size}"
        rows = outputs[1][: ours_count * a.ndim * 4].view(np.uint32).reshape(ours_count, a.ndim)
        return equal(rows, np.stack(expected, axis=1), "ours vs numpy rows")

    def check_ort(result, expected):
        return equal(result, np.stack(expected, axis=0), "ORT vs numpy")

    return Row(
        id_,
        label,
        spec,
        [a],
        numpy_fn,
        ort_fn,
        check_ours,
        check_ort,
        bytes_read=a.nbytes,
        bytes_written=4 + count * a.ndim * 4,
        iterations=iterations,
        rebuild=lambda bufs: nonzero_row(id_, label, bufs[0], iterations),
    )


def one_hot_row(
    id_: str, label: str, indices: np.ndarray, depth: int, dtype, iterations: int = 1
) -> Row:
    """DML_ONE_HOT along a new last axis (OffValue 0, OnValue 1 of `dtype`) against numpy
    (zeros, then a fancy-index assignment) and ONNX OneHot."""
    dtype = np.dtype(dtype)
    n = indices.size
    values = np.array([0, 1], dtype)
    spec = {
        "op": "one_hot",
        "index_dtype": DTYPE_NAMES[indices.dtype],
        "dtype": DTYPE_NAMES[dtype],
        "count": n,
        "depth": depth,
    }
    rows = np.arange(n)

    def numpy_fn():
        out = np.zeros((n, depth), dtype)
        out[rows, indices] = 1
        return out

    def ort_fn(threads: int) -> OrtRunner:
        depth_array = np.array([depth], indices.dtype)
        session = ort_session(
            [helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=-1)],
            [
                info("i", indices.dtype, [n]),
                info("d", depth_array.dtype, [1]),
                info("v", dtype, [2]),
            ],
            [info("y", dtype, [n, depth])],
            threads,
        )
        return OrtRunner(session, {"i": indices, "d": depth_array, "v": values})

    def check_ours(outputs, expected):
        return equal(
            outputs[0][: n * depth * dtype.itemsize].view(dtype).reshape(n, depth),
            expected,
            "ours vs numpy",
        )

    def check_ort(result, expected):
        return equal(result, expected, "ORT vs numpy")

    return Row(
        id_,
        label,
        spec,
        [indices, values],
        numpy_fn,
        ort_fn,
        check_ours,
        check_ort,
        bytes_read=indices.nbytes,
        bytes_written=n * depth * dtype.itemsize,
        iterations=iterations,
        rebuild=lambda bufs: one_hot_row(id_, label, bufs[0], depth, dtype, iterations),
    )


def sparse(dtype, shape, percent: float, seed: int) -> np.ndarray:
    """Nonzero with probability percent/100, independently per element."""
    g = rng(seed)
    mask = g.random(shape, dtype=np.float32) < percent / 100.0
    if np.dtype(dtype) == np.uint8:
        values = g.integers(1, 256, size=shape, dtype=np.uint8)
    else:
        values = (g.random(shape, dtype=np.float32) + 1.0).astype(dtype)
    return np.where(mask, values, np.zeros((), dtype))


def row_groups(quick: bool):
    """Yields lists of rows sharing inputs (generated lazily, freed after each group)."""
    s = 16 if quick else 1
    m = (4096 // s, 16384)
    dims = f"{{{m[0]},{m[1]}}}"
    for dtype, name in [
        (np.float32, "FLOAT32"),
        (np.int32, "INT32"),
        (np.float16, "FLOAT16"),
        (np.uint8, "UINT8"),
    ]:

        def group(dtype=dtype, name=name):
            a = random_array(dtype, m, 0xA1)
            short = name.lower().replace("float", "f").replace("uint", "u").replace("int", "i")
            rows = [
                argmax_row(f"argmax_{short}_axis1", f"ArgMax {name} {dims} axis 1", a, a, (1,), True),
                argmax_row(f"argmax_{short}_axis0", f"ArgMax {name} {dims} axis 0", a, a, (0,), True),
            ]
            if name in ("FLOAT32", "INT32"):
                rows.append(
                    argmax_row(f"argmax_{short}_all", f"ArgMax {name} {dims} both axes", a, a, (0, 1), True)
                )
            if name == "FLOAT32":
                t = a.T
                tdims = f"{{{m[1]},{m[0]}}}"
                rows += [
                    argmax_row("argmax_f32_transposed_axis0", f"ArgMax FLOAT32 transposed view {tdims} axis 0", a, t, (0,), False),
                    argmax_row("argmax_f32_transposed_axis1", f"ArgMax FLOAT32 transposed view {tdims} axis 1", a, t, (1,), False),
                ]
            return rows

        yield group

    def multi_axis():
        e = 64 // (2 if quick else 1)
        x = random_array(np.float32, (e, e, e, e), 0xA2)
        return [
            argmax_row("argmax_f32_64x4_axes13", f"ArgMax FLOAT32 {{{e}}}^4 axes 1,3", x, x, (1, 3), True),
            argmax_row("argmax_f32_64x4_axes23", f"ArgMax FLOAT32 {{{e}}}^4 axes 2,3", x, x, (2, 3), True),
        ]

    yield multi_axis

    def padded():
        shape = (16 // s if quick else 16, 16, 32, 32)
        p = random_array(np.float32, shape + (64,), 0xA3)
        v = p[..., :60]
        dims = "{" + ",".join(str(d) for d in v.shape) + "} in {..,64}"
        return [
            argmax_row("argmax_f32_padded_axis4", f"ArgMax FLOAT32 padded rank 5 {dims} axis 4", p, v, (4,), False),
            argmax_row("argmax_f32_padded_axes13", f"ArgMax FLOAT32 padded rank 5 {dims} axes 1,3", p, v, (1, 3), False),
        ]

    yield padded

    shape = (3, 10, 1000 // s, 1000)
    count = int(np.prod(shape))
    for dtype, name in [(np.float32, "FLOAT32"), (np.uint8, "UINT8")]:
        for percent in (5, 50, 90):

            def group(dtype=dtype, name=name, percent=percent):
                a = sparse(dtype, shape, percent, 0xB0 + percent)
                short = "f32" if name == "FLOAT32" else "u8"
                return [
                    nonzero_row(
                        f"nonzero_{short}_{percent}",
                        f"NonZeroCoordinates {name} {count:.0e} elements, {percent}% nonzero".replace("e+0", "e"),
                        a,
                    )
                ]

            yield group

    n, depth = (1 << 21) // s, 64
    for index_type, dtype, name in [
        (np.int32, np.float32, "INT32 -> FLOAT32"),
        (np.int32, np.float16, "INT32 -> FLOAT16"),
        (np.int64, np.int64, "INT64 -> INT64"),
    ]:

        def group(index_type=index_type, dtype=dtype, name=name):
            idx = rng(0xC1).integers(0, depth, size=n, dtype=index_type)
            short = name.lower().replace(" -> ", "_").replace("float", "f").replace("int", "i")
            return [one_hot_row(f"one_hot_{short}", f"OneHot {name}, {n} indices, depth {depth}", idx, depth, dtype)]

        yield group

    def latency():
        calls = 200 if quick else 2000
        a = random_array(np.float32, (16,), 0xD1)
        z = sparse(np.float32, (16,), 50, 0xD2)
        idx = rng(0xD3).integers(0, 4, size=4, dtype=np.int32)
        return [
            argmax_row("latency_argmax", "latency: ArgMax FLOAT32 {16}, per call", a, a, (0,), True, calls),
            nonzero_row("latency_nonzero", "latency: NonZeroCoordinates FLOAT32 {16}, per call", z, calls),
            one_hot_row("latency_one_hot", "latency: OneHot INT32 {4} -> FLOAT32 {4,4}, per call", idx, 4, np.float32, calls),
        ]

    yield latency


# --- Timing ------------------------------------------------------------------------------------


@contextlib.contextmanager
def cores_for(threads: int):
    """Per core (`threads` 1): the calling thread pinned to one CPU for the block, so that
    numpy, ONNX Runtime (one intra-op thread runs on the caller) and ours (the library's pool
    thread takes the caller's affinity) all run on the same core and find the same caches.
    Unpinned, our pool thread may run on the other core, whose caches are cold, and a
    cache-sized row then measures the move, not the kernel. All cores: left as it is."""
    allowed = os.sched_getaffinity(0)
    if threads != 1 or len(allowed) == 1:
        yield
        return
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def timed(fn, iterations: int) -> float:
    """Seconds per call of `fn` over `iterations` calls."""
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    return (time.perf_counter() - start) / iterations


# A contender whose first call takes longer than this is timed fewer times per run (at least
# once): far slower than the others, its exact time does not change a ratio's verdict, and the
# three runs must fit in the benchmark's time budget.
SLOW_CALL_S = 0.25
SLOW_BUDGET_S = 1.0


def run_row(row: Row, case: Case, threads: int, reps: int, log, bandwidth=None, write_of=None) -> dict:
    """Times ours, numpy and ONNX Runtime on `row`, interleaved; checks their results.

    The first call of each contender (the one checked) is its warm-up. Then `reps` rounds,
    each in the next permutation of the contenders (6 rounds: every order once); a contender
    whose first call took over SLOW_CALL_S is timed only in the first max(1, SLOW_BUDGET_S /
    that) rounds. `bandwidth` (() -> (read GB/s, write GB/s)), when given, is measured at the
    start of every round, and the row's floor takes the best of those (`bandwidth_gbs`): the
    floor then holds for the conditions the row ran in. On a 2-vCPU KVM guest (AMD EPYC, Zen 5,
    round 29) two threads wrote at 43 or at 85 GB/s depending on the host's state (where it
    had put the vCPUs, we suppose), for seconds to minutes at a time; one measurement at the
    start and end of a run gave some rows a floor from the fast state while they ran in the
    slow one. `write_of`
    ((sample) -> write GB/s), when given too, measures in every round the write bandwidth of
    copies of a sample of our checked output (`output_sample`), and the floor takes the better
    of the two writes: that machine wrote copies of OneHot's mostly-zero output at 84–93 GB/s
    on one thread and nonzero bytes (the fill) at 44, so a fill-only floor was no floor there."""
    result = {"threads": threads}
    checks = {}
    first = {}
    start = time.perf_counter()
    for _ in range(row.iterations):
        expected = row.numpy()
    first["numpy"] = (time.perf_counter() - start) / row.iterations
    try:
        first["ours"] = case.run(threads, row.iterations) / row.iterations
        problem = row.check_ours(outputs_of(case, row), expected)
    except Exception as e:  # noqa: BLE001 - a failure is reported in the table
        problem = f"ours failed: {e}"
    checks["ours"] = problem or "ok"
    sample = output_sample(case, row) if write_of is not None and problem is None else None
    runner = None
    if row.ort is not None:
        try:
            runner = row.ort(threads)
            runner()  # the session's own first-run setup, untimed
            start = time.perf_counter()
            for _ in range(row.iterations):
                runner()
            first["ort"] = (time.perf_counter() - start) / row.iterations
            checks["ort"] = row.check_ort(runner.result(), expected) or "ok"
        except Exception as e:  # noqa: BLE001
            runner = None
            message = str(e).splitlines()[0][:160]
            result["ort_error"] = message
            checks["ort"] = f"unavailable: {message}"
    del expected
    gc.collect()
    contenders = {
        "ours": lambda: case.run(threads, row.iterations) / row.iterations,
        "numpy": lambda: timed(row.numpy, row.iterations),
    }
    if runner is not None:
        contenders["ort"] = lambda: timed(runner, row.iterations)
    names = list(contenders)
    wanted = {
        name: reps
        if first.get(name, 0) * row.iterations <= SLOW_CALL_S
        else max(1, min(reps, int(SLOW_BUDGET_S / (first[name] * row.iterations))))
        for name in names
    }
    times = {name: [] for name in names}
    # Every order of the contenders in turn, not one order rotated: rotating keeps the cyclic
    # order, so one contender always ran right after the same other one. On this machine
    # memory left untouched for 10-20 ms is slower to reach again (a 16 MB read 0.57 ms warm,
    # 1.06 ms after 20 ms of other work), so the contender that always followed the slowest
    # peer (ours, after ONNX Runtime's 23 ms OneHot) was always timed cold, and the others warm.
    orders = list(itertools.permutations(names))
    measured = []
    gc.disable()
    try:
        for rep in range(reps):
            if bandwidth is not None:
                read, write = bandwidth()
                own = write_of(sample) if sample is not None else 0.0
                measured.append((read, write, own))
            order = orders[rep % len(orders)]
            for name in order:
                if len(times[name]) < wanted[name]:
                    times[name].append(contenders[name]() * 1e3)
    finally:
        gc.enable()
    for name in names:
        result[name] = {"times_ms": times[name], "median_ms": statistics.median(times[name])}
    result["check"] = checks
    if measured:
        fill, own = max(m[1] for m in measured), max(m[2] for m in measured)
        result["bandwidth_gbs"] = {
            "read": max(m[0] for m in measured),
            "write": max(fill, own),
            "write_fill": fill,
            "write_own_output": own if sample is not None else None,
            "measurements": len(measured),
            # Round by round (read, the better write), for the floor paired with each round.
            "rounds": [[m[0], max(m[1], m[2])] for m in measured],
        }
    line = f"  {row.label[:60]:<60} {threads:>2}t"
    for name in ("ours", "numpy", "ort"):
        value = result.get(name, {}).get("median_ms")
        line += f"  {name} " + (f"{value:10.4f} ms" if value is not None else "      —      ")
    bad = {k: v for k, v in checks.items() if v != "ok" and not v.startswith("unavailable")}
    log(line + (f"  CHECK: {bad}" if bad else ""))
    return result


# The largest sample of a row's output that its write bandwidth is measured with: 1 MiB, from
# the middle of what the row writes (a NonZeroCoordinates output's first rows hold smaller
# coordinates than the rest).
OUTPUT_SAMPLE_BYTES = 1 << 20


def output_sample(case: Case, row: Row) -> np.ndarray | None:
    """Up to OUTPUT_SAMPLE_BYTES of the bytes `row` writes (its largest output, cut to
    `bytes_written`), from their middle; None for outputs under 4 KiB."""
    largest = max(outputs_of(case, row), key=lambda a: a.size)
    written = largest[: min(largest.size, row.bytes_written)]
    if written.size < 4096:
        return None
    start = max(0, written.size // 2 - OUTPUT_SAMPLE_BYTES // 2)
    return np.ascontiguousarray(written[start : start + OUTPUT_SAMPLE_BYTES])


def outputs_of(case: Case, row: Row) -> list:
    count = 2 if row.spec["op"] == "nonzero" else 1
    return [case.output(i) for i in range(count)]


def machine() -> dict:
    model = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            memory = int(f.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_bytes": memory,
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def command_run(args) -> int:
    ours = Ours(args.lib)
    cores = os.cpu_count() or 1
    sets = [("per-core", 1), ("all-cores", cores)]
    reps = args.reps
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    load_before = os.getloadavg()
    bw_bytes = (64 if args.quick else 512) << 20
    bandwidth = {}
    for name, threads in sets:
        with cores_for(threads):
            bandwidth[name] = ours.bandwidth(threads, bw_bytes, 5)
        log(f"bandwidth {name} ({threads} thread(s)): read {bandwidth[name][0]:.1f} GB/s, write {bandwidth[name][1]:.1f} GB/s")
    rows = []
    for make in row_groups(args.quick):
        group = make()
        for row in group:
            if args.only and args.only not in row.id:
                continue
            case = ours.case(row.spec, row.buffers)
            shared = None
            try:
                shared = sharing(row, case)
                entry = {
                    "id": row.id,
                    "label": row.label,
                    "contiguous": row.contiguous,
                    "bytes_read": row.bytes_read,
                    "bytes_written": row.bytes_written,
                    "iterations": row.iterations,
                }
                for name, threads in sets:
                    with cores_for(threads):
                        measure = lambda t=threads: ours.bandwidth(t, bw_bytes, 1)  # noqa: E731
                        write_of = lambda sample, t=threads: ours.write_bandwidth_of(t, bw_bytes, 1, sample)  # noqa: E731
                        entry[name] = run_row(shared, case, threads, reps, log, measure, write_of)
                rows.append(entry)
            finally:
                del shared  # its arrays are views of the case's buffers
                case.free()
        del group
        gc.collect()
    # The bandwidth again at the end: the floor takes the best of both.
    for name, threads in sets:
        with cores_for(threads):
            again = ours.bandwidth(threads, bw_bytes, 5)
        bandwidth[name] = (max(bandwidth[name][0], again[0]), max(bandwidth[name][1], again[1]))
    doc = {
        "machine": machine(),
        "isa": ours.isa(),
        "numpy": np.__version__,
        "onnxruntime": ort.__version__,
        "reps": reps,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "bandwidth_gbs": {k: {"read": v[0], "write": v[1], "threads": t} for (k, t), v in zip(sets, bandwidth.values())},
        "rows": rows,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return 0


# --- Report ------------------------------------------------------------------------------------


def floor_ms(row: dict, bw: dict) -> float:
    return (row["bytes_read"] / (bw["read"] * 1e9) + row["bytes_written"] / (bw["write"] * 1e9)) * 1e3


def row_bandwidth(run: dict, i: int, set_name: str) -> dict:
    """The bandwidth of row `i`'s floor in `run`: the best measured in its own rounds, or (runs
    from before round 29) the run's best at its start and end."""
    return run["rows"][i][set_name].get("bandwidth_gbs") or run["bandwidth_gbs"][set_name]


def paired_floor_ratio(row: dict, entry: dict) -> float | None:
    """Ours over the floor round by round in one run: the median, over the rounds in which ours
    was timed, of its time in the round over the floor from the bandwidth measured at that
    round's start; None for runs that kept no bandwidth per round.

    The floor of the table takes the best bandwidth of the row's rounds. Where the host changes
    state within a row (on the Zen 5 guest two threads wrote at 43 or at 85 GB/s for seconds to
    minutes at a time), that floor can come from a fast round while most of ours ran in slow
    ones; paired, each time is set against the bandwidth of its own conditions."""
    rounds = (entry.get("bandwidth_gbs") or {}).get("rounds")
    times = entry["ours"]["times_ms"]
    if not rounds or len(rounds) < len(times):
        return None
    ratios = [t / floor_ms(row, {"read": read, "write": write}) for t, (read, write) in zip(times, rounds)]
    return statistics.median(ratios)


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "—"
    if v < 0.1:
        return f"{v * 1e3:.2f} µs"
    return f"{v:.2f}"


def summarise(runs: list[dict]) -> dict:
    """Per set and row: medians over runs of the per-run medians, ours' spread, the floor."""
    out = {}
    for set_name in ("per-core", "all-cores"):
        rows = []
        for i, row in enumerate(runs[0]["rows"]):
            entries = [r["rows"][i][set_name] for r in runs if i < len(r["rows"])]
            median = lambda name: (  # noqa: E731
                statistics.median([e[name]["median_ms"] for e in entries]) if all(name in e for e in entries) else None
            )
            ours_runs = [e["ours"]["median_ms"] for e in entries]
            floors = [floor_ms(r["rows"][i], row_bandwidth(r, i, set_name)) for r in runs]
            paired = [paired_floor_ratio(r["rows"][i], r["rows"][i][set_name]) for r in runs if i < len(r["rows"])]
            checks = {}
            for e in entries:
                for k, v in e["check"].items():
                    if v != "ok":
                        checks[k] = v
            ours, numpy_, ort_ = median("ours"), median("numpy"), median("ort")
            peers = [p for p in (numpy_, ort_) if p is not None]
            best = min(peers) if peers else None
            floor = statistics.median(floors)
            rows.append(
                {
                    "label": row["label"],
                    "contiguous": row["contiguous"],
                    "latency": row["iterations"] > 1,
                    "ours": ours,
                    "ours_min": min(ours_runs),
                    "ours_max": max(ours_runs),
                    "numpy": numpy_,
                    "ort": ort_,
                    "best_peer": best,
                    "floor": floor,
                    "vs_peer": ours / best if best else None,
                    "vs_floor": ours / floor if floor else None,
                    "vs_floor_paired": statistics.median(paired) if paired and None not in paired else None,
                    "checks": checks,
                }
            )
        out[set_name] = rows
    return out


def markdown(runs: list[dict]) -> str:
    summary = summarise(runs)
    first = runs[0]
    m = first["machine"]
    lines = []
    lines.append(
        f"- Machine: {m['cpu']}, {m['cores']} cores, {(m['memory_bytes'] or 0) / 2**30:.0f} GiB RAM, "
        f"{m['system']}; CPU backend kernels: {first['isa']}."
    )
    lines.append(
        f"- Peers: numpy {first['numpy']}, ONNX Runtime {first['onnxruntime']} (CPU execution provider, "
        "single-operator sessions through IO binding)."
    )
    loads = ", ".join(f"{r['load_before'][0]:.1f}→{r['load_after'][0]:.1f}" for r in runs)
    lines.append(
        f"- {len(runs)} runs of {first['reps']} interleaved repetitions each; the tables give the median "
        f"of the per-run medians, and the range of ours over the runs. Load average (1 min) before→after "
        f"each run: {loads}."
    )
    for set_name, title in (("per-core", "Per core (1 thread each side)"), ("all-cores", f"All cores ({m['cores']} threads)")):
        bws = [r["bandwidth_gbs"][set_name] for r in runs]
        lines.append("")
        lines.append(f"### {title}")
        lines.append("")
        lines.append(
            "Bandwidth at the start and end of each run (best of both): read "
            + ", ".join(f"{b['read']:.1f}" for b in bws)
            + " GB/s; write "
            + ", ".join(f"{b['write']:.1f}" for b in bws)
            + " GB/s."
            + rows_bandwidth_text(runs, set_name)
        )
        lines.append("")
        lines.append(
            "| row | ours ms | ours range | numpy ms | ORT ms | floor ms | ours/best peer | ours/floor | "
            "ours/floor, paired by round | check |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in summary[set_name]:
            ratio = lambda v: "—" if v is None else f"{v:.2f}"  # noqa: E731
            check = "ok" if not r["checks"] else "; ".join(f"{k}: {v}" for k, v in r["checks"].items())
            floor_ratio = "—" if r["latency"] else ratio(r["vs_floor"]) + ("" if r["contiguous"] else " (strided)")
            paired_ratio = "—" if r["latency"] else ratio(r["vs_floor_paired"])
            lines.append(
                f"| {r['label']} | {fmt_ms(r['ours'])} | {fmt_ms(r['ours_min'])}–{fmt_ms(r['ours_max'])} | "
                f"{fmt_ms(r['numpy'])} | {fmt_ms(r['ort'])} | {'—' if r['latency'] else fmt_ms(r['floor'])} | "
                f"{ratio(r['vs_peer'])} | {floor_ratio} | {paired_ratio} | {check} |"
            )
    lines.append("")
    lines.append(verdict(summary))
    return "\n".join(lines) + "\n"


def rows_bandwidth_text(runs: list[dict], set_name: str) -> str:
    """The range of the rows' own bandwidths (each row's floor is from its own), or ''."""
    own = [r["rows"][i][set_name].get("bandwidth_gbs") for r in runs for i in range(len(r["rows"]))]
    own = [b for b in own if b]
    if not own:
        return ""
    span = lambda key: f"{min(b[key] for b in own):.1f}–{max(b[key] for b in own):.1f}"  # noqa: E731
    text = (
        " Each row's floor is from the bandwidth measured at the start of each of its rounds (best of"
        f" those): over rows and runs, read {span('read')} GB/s, write {span('write')} GB/s"
    )
    own_rows = [b for b in own if b.get("write_own_output")]
    if own_rows:
        fills = f"{min(b['write_fill'] for b in own_rows):.1f}–{max(b['write_fill'] for b in own_rows):.1f}"
        outs = f"{min(b['write_own_output'] for b in own_rows):.1f}–{max(b['write_own_output'] for b in own_rows):.1f}"
        text += (
            f" (the better of a fill with nonzero bytes, {fills} GB/s, and copies of a sample of the"
            f" row's own output, {outs} GB/s)"
        )
    return text + "."


def verdict(summary: dict) -> str:
    """The targets, stated from the table alone."""
    out = []
    for set_name in ("per-core", "all-cores"):
        rows = summary[set_name]
        slower = [r["label"] for r in rows if r["vs_peer"] is not None and r["vs_peer"] >= 1]
        floored = [r for r in rows if r["contiguous"] and not r["latency"]]
        over = [r["label"] for r in floored if r["vs_floor"] is not None and r["vs_floor"] > 1.5]
        paired_over = [r["label"] for r in floored if r["vs_floor_paired"] is not None and r["vs_floor_paired"] > 1.5]
        paired_known = sum(1 for r in floored if r["vs_floor_paired"] is not None)
        bad = [r["label"] for r in rows if any(not v.startswith("unavailable") for v in r["checks"].values())]
        out.append(
            f"- {set_name}: ours/best peer < 1 on "
            f"{len(rows) - len(slower)} of {len(rows)} rows"
            + (f" (not on: {'; '.join(slower)})" if slower else "")
            + f"; ours/floor ≤ 1.5 on {sum(1 for r in rows if r['contiguous'] and not r['latency']) - len(over)} of "
            f"{sum(1 for r in rows if r['contiguous'] and not r['latency'])} contiguous rows"
            + (f" (not on: {'; '.join(over)})" if over else "")
            + (
                f"; paired by round, ≤ 1.5 on {paired_known - len(paired_over)} of {paired_known}"
                + (f" (not on: {'; '.join(paired_over)})" if paired_over else "")
                if paired_known
                else ""
            )
            + f"; results equal on {len(rows) - len(bad)} of {len(rows)} rows"
            + (f" (not on: {'; '.join(bad)})" if bad else "")
            + "."
        )
    return "\n".join(out)


BEGIN = "<!-- bench_peers.py report: begin -->"
END = "<!-- bench_peers.py report: end -->"


def command_report(args) -> int:
    runs = []
    for path in args.runs:
        with open(path, encoding="utf-8") as f:
            runs.append(json.load(f))
    text = markdown(runs)
    print(text)
    summary = summarise(runs)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": runs[0]["machine"], "runs": len(runs), "sets": summary}, f, indent=1)
    mismatched = [
        f"{set_name}: {r['label']}: {r['checks']}"
        for set_name, rows in summary.items()
        for r in rows
        if any(not v.startswith("unavailable") for v in r["checks"].values())
    ]
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
    if args.doc:
        with open(args.doc, encoding="utf-8") as f:
            doc = f.read()
        if BEGIN not in doc or END not in doc:
            print(f"{args.doc}: no {BEGIN} … {END} section to replace", file=sys.stderr)
            return 1
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + "\n" + text + END + tail)
    for line in mismatched:
        print(f"CHECK FAILED: {line}", file=sys.stderr)
    return 1 if mismatched else 0


# --- Sweep: random shapes, types and layouts --------------------------------------------------


SWEEP_ARGMAX_TYPES = [np.float32, np.float16, np.int32, np.int64, np.uint8]
SWEEP_NONZERO_TYPES = [np.float32, np.float16, np.int32, np.uint8]  # DirectML 4_1 table: no 64-bit
SWEEP_ONE_HOT_TYPES = [np.float32, np.float16, np.int32, np.int64, np.uint8]


def random_sizes(g: np.random.Generator, rank: int, elements: int) -> list[int]:
    """`rank` sizes whose product is near `elements`, each at least 1, in random proportions."""
    weights = g.dirichlet(np.ones(rank))
    sizes = [max(1, int(round(elements ** w))) for w in weights]
    return sizes


def sweep_elements(g: np.random.Generator, size: str, large: tuple[float, float]) -> int:
    """Elements of a sweep row of size class `size`: tiny (2 to 256), small (2^8 to 2^20, where
    the per-call costs and a pool's wake-up weigh against the work) or large (2^`large`)."""
    if size == "tiny":
        return int(g.integers(2, 257))
    if size == "small":
        return int(2 ** g.uniform(8, 20))
    return int(2 ** g.uniform(*large))


def sweep_iterations(size: str) -> int:
    """Calls timed together for one sample of a row of size class `size`."""
    return 2000 if size == "tiny" else 1


def sweep_argmax(g: np.random.Generator, k: int, size: str) -> Row:
    dtype = np.dtype(SWEEP_ARGMAX_TYPES[g.integers(len(SWEEP_ARGMAX_TYPES))])
    rank = int(g.integers(1, 6))
    elements = sweep_elements(g, size, (20, 24))
    sizes = random_sizes(g, rank, elements)
    layout = ["contiguous", "permuted", "padded"][g.choice(3, p=[0.5, 0.3, 0.2])]
    if rank == 1 and layout == "permuted":
        layout = "contiguous"
    seed = int(g.integers(1 << 30))
    if layout == "padded":
        pad = int(g.integers(1, 9))
        base = random_array(dtype, sizes[:-1] + [sizes[-1] + pad], seed)
        view = base[..., : sizes[-1]]
    elif layout == "permuted":
        perm = list(g.permutation(rank))
        base = random_array(dtype, sizes, seed)
        view = np.transpose(base, perm)
    else:
        base = random_array(dtype, sizes, seed)
        view = base
    count = 1 if rank == 1 else int(g.choice([1, 1, 1, 2, rank])) if rank > 2 else int(g.integers(1, 3))
    axes = tuple(sorted(int(a) for a in g.choice(rank, size=min(count, rank), replace=False)))
    label = (
        f"ArgMax {DTYPE_NAMES[dtype]} {list(view.shape)} {layout} axes {','.join(map(str, axes))}"
    )
    return argmax_row(
        f"sweep_{k}", label, base, view, axes, layout == "contiguous", sweep_iterations(size)
    )


def sweep_nonzero(g: np.random.Generator, k: int, size: str) -> Row:
    dtype = np.dtype(SWEEP_NONZERO_TYPES[g.integers(len(SWEEP_NONZERO_TYPES))])
    rank = int(g.integers(1, 6))
    elements = sweep_elements(g, size, (20, 24.5))
    sizes = random_sizes(g, rank, elements)
    percent = float(g.choice([0.1, 1, 5, 25, 50, 75, 95, 100]))
    a = sparse(dtype, sizes, percent, int(g.integers(1 << 30)))
    label = f"NonZeroCoordinates {DTYPE_NAMES[dtype]} {sizes} {percent:g}% nonzero"
    return nonzero_row(f"sweep_{k}", label, a, sweep_iterations(size))


def sweep_one_hot(g: np.random.Generator, k: int, size: str) -> Row:
    index_type = np.dtype([np.int32, np.int64][g.integers(2)])
    dtype = np.dtype(SWEEP_ONE_HOT_TYPES[g.integers(len(SWEEP_ONE_HOT_TYPES))])
    depth = int(g.choice([1, 2, 3, 7, 16, 33, 64, 100, 1000, 4096]))
    if size == "tiny":
        n = int(g.integers(1, 17))
    else:
        n = max(1, sweep_elements(g, size, (22, 25)) // depth)
    indices = rng(int(g.integers(1 << 30))).integers(0, depth, size=n, dtype=index_type)
    label = f"OneHot {DTYPE_NAMES[index_type]} -> {DTYPE_NAMES[dtype]}, {n} indices, depth {depth}"
    return one_hot_row(f"sweep_{k}", label, indices, depth, dtype, sweep_iterations(size))


def command_sweep(args) -> int:
    """Random rows (operator, type, rank, sizes, layout, axes, density, depth) from a seed,
    per core (`--threads 1`, the default) or on a pool of `--threads` threads (ours and ONNX
    Runtime; numpy has one): ours against the best peer, worst rows first. A check of the class
    of problem beside the fixed rows of `run`. With `--small 0` (the default) a seed draws the
    rows it drew before that option existed."""
    ours = Ours(args.lib)
    g = rng(args.seed)
    threads = args.threads
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    with cores_for(threads):
        read, write = ours.bandwidth(threads, 256 << 20, 3)
    makers = [sweep_argmax, sweep_nonzero, sweep_one_hot]
    if args.operator:
        makers = [m for m in makers if args.operator in m.__name__]
    results, mismatched = [], []
    for k in range(args.rows):
        make = makers[int(g.integers(len(makers)))]
        draw = g.random()
        size = "tiny" if draw < args.tiny else "small" if draw < args.tiny + args.small else "large"
        row = make(g, k, size)
        case = ours.case(row.spec, row.buffers)
        shared = None
        try:
            shared = sharing(row, case)
            with cores_for(threads):
                entry = run_row(
                    shared,
                    case,
                    threads,
                    args.reps,
                    log,
                    lambda: ours.bandwidth(threads, 256 << 20, 1),
                    lambda sample: ours.write_bandwidth_of(threads, 256 << 20, 1, sample),
                )
        finally:
            del shared  # its arrays are views of the case's buffers
            case.free()
        peers = [entry[n]["median_ms"] for n in ("numpy", "ort") if n in entry]
        own = entry.get("bandwidth_gbs") or {"read": read, "write": write}
        floor = floor_ms({"bytes_read": row.bytes_read, "bytes_written": row.bytes_written}, own)
        ours_ms = entry["ours"]["median_ms"]
        results.append(
            {
                "label": row.label,
                "ours_ms": ours_ms,
                "best_peer_ms": min(peers),
                "ratio": ours_ms / min(peers),
                "floor_ratio": None if row.iterations > 1 else ours_ms / floor,
                "check": entry["check"],
            }
        )
        bad = {n: v for n, v in entry["check"].items() if v != "ok" and not v.startswith("unavailable")}
        if bad:
            mismatched.append(f"{row.label}: {bad}")
        del row
        gc.collect()
    results.sort(key=lambda r: -r["ratio"])
    print(
        f"sweep seed {args.seed}: {len(results)} rows, {'per core' if threads == 1 else f'{threads} threads'};"
        f" read {read:.1f} GB/s, write {write:.1f} GB/s"
        " at the start (each row's floor: the best bandwidth measured in its own rounds)"
    )
    print("| row | ours ms | best peer ms | ours/best peer | ours/floor |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        floor_text = "—" if r["floor_ratio"] is None else f"{r['floor_ratio']:.2f}"
        print(f"| {r['label']} | {r['ours_ms']:.4f} | {r['best_peer_ms']:.4f} | {r['ratio']:.2f} | {floor_text} |")
    ahead = sum(r["ratio"] < 1 for r in results)
    print(f"\nours/best peer < 1 on {ahead} of {len(results)} rows; results equal on {len(results) - len(mismatched)} of {len(results)}.")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"seed": args.seed, "threads": threads, "rows": results}, f, indent=1)
    for line in mismatched:
        print(f"CHECK FAILED: {line}", file=sys.stderr)
    return 1 if mismatched else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="time ours, numpy and ONNX Runtime; write a run's JSON")
    run.add_argument("--lib", required=True, help="path of libopconform_bench.so")
    run.add_argument("--out", required=True, help="where to write the run's results")
    run.add_argument("--reps", type=int, default=6, help="interleaved repetitions per row")
    run.add_argument("--only", help="run only rows whose id contains this text")
    run.add_argument("--quick", action="store_true", help="small inputs (a smoke test)")
    report = sub.add_parser("report", help="merge runs into the Markdown tables")
    report.add_argument("runs", nargs="+", help="run JSON files")
    report.add_argument("--markdown", help="write the tables here")
    report.add_argument("--doc", help="replace the generated section of this Markdown file")
    report.add_argument("--json", help="write the merged summary (medians, ratios) here")
    sweep = sub.add_parser("sweep", help="random rows from a seed, worst first")
    sweep.add_argument("--lib", required=True, help="path of libopconform_bench.so")
    sweep.add_argument("--seed", type=int, default=1, help="seed of the rows drawn")
    sweep.add_argument("--rows", type=int, default=40, help="rows drawn")
    sweep.add_argument("--reps", type=int, default=6, help="interleaved repetitions per row")
    sweep.add_argument("--tiny", type=float, default=0.15, help="share of 1-256-element latency rows")
    sweep.add_argument("--small", type=float, default=0.0, help="share of 2^8-2^20-element rows")
    sweep.add_argument("--threads", type=int, default=1, help="threads on each side (1: per core)")
    sweep.add_argument("--operator", help="argmax, nonzero or one_hot only")
    sweep.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args()
    commands = {"run": command_run, "report": command_report, "sweep": command_sweep}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
