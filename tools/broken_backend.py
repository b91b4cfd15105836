#!/usr/bin/env python3
"""A backend protocol v1 backend (docs/backend-protocol.md) in plain Python and numpy.

It implements DML_ONE_HOT, DML_NONZERO_COORDINATES, DML_ARGMAX and OpenVINO OneHot-1, written
from the operator documents (shared/seeds/) and our readings of them (specs/*.yaml), without
looking at opconform's Rust code: with no --break it is an independent, correct oracle.
With --break MODE it plants exactly one spec violation, to show that a run catches it:

  ties-wrong-way            ArgMax INCREASING returns the last maximum, not the first
  negative-indices-ignored  DML_ONE_HOT treats negative indices as out of range
  negative-zero-nonzero     NonZeroCoordinates counts -0.0 as nonzero
  wrong-onvalue             DML_ONE_HOT takes OnValue as the flat element 1 of the ValuesTensor
                            buffer instead of along the fastest-changing dimension of size > 1
  truncate-64bit-indices    64-bit one-hot indices are truncated to 32 bits
  unwritten-element         the last output element the operator defines is left unwritten
  crash                     the process exits on its 3rd execute (counted from each start, so
                            after opconform restarts it, every 3rd case crashes)
  hang                      the process sleeps forever on its 3rd execute (likewise)

Run it as:  opconform certify --backend-cmd "python3 tools/broken_backend.py --break hang"

The protocol loop, tensor access through strides and the descriptor validator come from
tools/protocol_v1.py, which the adapters under backends/ share. Only numpy is needed.
"""

import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside tools/protocol_v1.py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import protocol_v1 as kit  # noqa: E402 - the protocol loop, strides and the validator

# --------------------------------------------------------------------------------------------
# The oracle: the four operators in numpy, from the documents
# --------------------------------------------------------------------------------------------

BREAK_MODES = [
    "ties-wrong-way",
    "negative-indices-ignored",
    "negative-zero-nonzero",
    "wrong-onvalue",
    "truncate-64bit-indices",
    "unwritten-element",
    "crash",
    "hang",
]


def truncate_to_32_bits(indices):
    """What a 64-bit index becomes in a 32-bit register (the truncate-64bit-indices bug)."""
    if indices.dtype.itemsize == 8:
        return indices.astype(np.uint32 if indices.dtype.kind == "u" else np.int32)
    return indices


def oracle_one_hot(case, mode):
    """DML_ONE_HOT: sequences along Axis; OnValue where the index (negative counting from the
    end from 3_0, for signed types) points, OffValue elsewhere; out-of-range sequences all
    OffValue. Values are copied bit for bit."""
    op = case.operator
    axis = op["axis"]
    length = op["output"]["sizes"][axis]
    indices = case.input(0)
    if mode == "truncate-64bit-indices":
        indices = truncate_to_32_bits(indices)
    off, on = kit.one_hot_values(case)
    if mode == "wrong-onvalue":
        flat = np.frombuffer(case.inputs[1][2], dtype=kit.BITS[kit.dtype_of(op["values"]).itemsize])
        on = flat[1]
    if indices.dtype.kind == "u":
        valid = indices < length
        position = np.where(valid, indices, 0).astype(np.int64)
    else:
        position = indices.astype(np.int64)
        negatives = kit.level_at_least(case.level, ("dml", 0x3000)) and mode != "negative-indices-ignored"
        if negatives:
            position = np.where(position < 0, position + length, position)
        valid = (position >= 0) & (position < length)
    shape = [1] * len(op["output"]["sizes"])
    shape[axis] = length
    along = np.arange(length, dtype=np.int64).reshape(shape)
    hot = valid & (position == along)
    case.outputs[0].write(np.where(hot, on, off), bits=True)


def oracle_argmax(case, mode):
    """DML_ARGMAX: the row-major flat index, within the reduced axes, of the first maximum
    (INCREASING) or the last (DECREASING); NaN above every number; -0.0 ties +0.0."""
    op = case.operator
    x = case.input(0)
    perm, kept, count = kit.argmax_layout(x.shape, op["axes"])
    rows = np.transpose(x, perm).reshape(kept + [count])
    last = op["axis_direction"] == "DML_AXIS_DIRECTION_DECREASING"
    if mode == "ties-wrong-way" and not last:
        last = True
    if rows.dtype.kind == "f":
        nan = np.isnan(rows)
        best = np.where(nan.any(-1, keepdims=True), nan,
                        rows == np.max(np.where(nan, -np.inf, rows), -1, keepdims=True))
    else:
        best = rows == rows.max(-1, keepdims=True)
    if last:
        index = count - 1 - np.argmax(best[..., ::-1], -1)
    else:
        index = np.argmax(best, -1)
    case.outputs[0].write(index.reshape(op["output"]["sizes"]))


def oracle_nonzero(case, mode):
    """DML_NONZERO_COORDINATES: the last N coordinates of each nonzero element, in increasing
    element order, and their count; -0.0 is zero, NaN is not."""
    op = case.operator
    x = case.input(0)
    nonzero = x != 0
    if mode == "negative-zero-nonzero" and x.dtype.kind == "f":
        nonzero = nonzero | np.signbit(x)
    coords = np.argwhere(nonzero)
    count = coords.shape[0]
    sizes = op["output_coordinates"]["sizes"]
    m, n = sizes[-2], sizes[-1]
    table = np.zeros((m, n), dtype=np.uint32)
    table[:count] = coords[:, coords.shape[1] - n:]
    case.outputs[0].write(np.full(op["output_count"]["sizes"], count, dtype=np.uint32))
    case.outputs[1].write(table.reshape(sizes), rows=count)


def oracle_ov_one_hot(case, mode):
    """OneHot-1: on_value where indices == i along the new axis, off_value elsewhere (indices
    >= depth or negative match no i)."""
    op = case.operator
    indices = case.input(0)
    if mode == "truncate-64bit-indices":
        indices = truncate_to_32_bits(indices)
    depth = op["depth_value"]
    on = case.input(2, bits=True)
    off = case.input(3, bits=True)
    n = indices.ndim
    axis = op["axis"] + n + 1 if op["axis"] < 0 else op["axis"]
    expanded = np.expand_dims(indices.astype(np.int64), axis)
    shape = [1] * (n + 1)
    shape[axis] = depth
    along = np.arange(depth, dtype=np.int64).reshape(shape)
    case.outputs[0].write(np.where(expanded == along, on, off), bits=True)


ORACLE = {
    "DML_ONE_HOT": oracle_one_hot,
    "DML_NONZERO_COORDINATES": oracle_nonzero,
    "DML_ARGMAX": oracle_argmax,
    "OneHot-1": oracle_ov_one_hot,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--break", dest="mode", choices=BREAK_MODES,
                        help="plant one spec violation (see the module doc)")
    args = parser.parse_args(argv)
    out = kit.protocol_stdout()
    executed = [0]

    def execute(case):
        executed[0] += 1
        if executed[0] == 3 and args.mode == "crash":
            kit.log("broken_backend: crashing on purpose (--break crash)")
            os._exit(70)
        if executed[0] == 3 and args.mode == "hang":
            kit.log("broken_backend: hanging on purpose (--break hang)")
            while True:
                time.sleep(3600)
        kit.reject_invalid(case)
        ORACLE[case.kind](case, args.mode)
        if args.mode == "unwritten-element":
            for output in reversed(case.outputs):
                if output.unwrite_last():
                    break

    hello = {
        "name": "broken_backend" + ("" if args.mode is None else ":" + args.mode),
        "version": "1.0",
        "device": "numpy %s on the CPU (Python %s)" % (np.__version__, sys.version.split()[0]),
        "claims": ["4_1", "opset1"],
        "operators": list(kit.OPERATORS),
    }
    kit.serve(hello, execute, out)


if __name__ == "__main__":
    main()
