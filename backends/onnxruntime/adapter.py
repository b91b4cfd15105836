#!/usr/bin/env python3
"""ONNX Runtime (CPU execution provider) as an opconform backend, over backend protocol v1.

Each case becomes a one-node ONNX graph run by `onnxruntime.InferenceSession` on the
CPUExecutionProvider:

  DML_ONE_HOT              OneHot: the IndicesTensor without its size-1 Axis dimension, depth =
                           the OutputTensor's Axis size, values = [OffValue, OnValue] read from
                           the ValuesTensor as the spec says, axis = Axis.
  DML_ARGMAX               ArgMax over one axis (keepdims=0); several axes are first moved last
                           and flattened (transpose + reshape); DECREASING is
                           select_last_index=1. The int64 result is cast to the output type.
  DML_NONZERO_COORDINATES  NonZero, whose [rank, count] result is transposed into DML's
                           [count, N] rows (the last N coordinates) plus the count.
  OneHot-1                 OneHot with values = [off_value, on_value] and the same axis.

Inputs arrive with strides and are materialised with numpy first; outputs are written back
through the output strides. Indices for OneHot are passed as int64 (a lossless change for
INT32, UINT32 and INT64; UINT64 values of 2^63 and above, out of range for any depth, become
INT64_MAX, still out of range). Every other tensor keeps its type where ONNX Runtime's CPU
provider has a kernel for it; where it has none, the node is retried with a lossless stand-in
type (ORDER_KEEPING for ArgMax, ZERO_KEEPING for NonZero, VALUE_KEEPING for OneHot values), so
ONNX Runtime's own kernel still computes the result. With --native-only such cases are answered
`unsupported` with ONNX Runtime's reason instead.
ONNX OneHot needs indices of rank 1 or more: 0-D indices (a rank-1 DML_ONE_HOT,
a 0-D OneHot-1) run as shape [1] and the result is reshaped.
Descriptors invalid at the requested level are rejected by rule id with the shared validator
in tools/protocol_v1.py.

Run: opconform certify --backend-cmd ".venv/bin/python backends/onnxruntime/adapter.py"
                           --baseline backends/onnxruntime/baseline.yaml
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside tools/protocol_v1.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

import protocol_v1 as kit  # noqa: E402 - the protocol loop, strides and the validator

PROTOCOL_OUT = kit.protocol_stdout()

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import helper  # noqa: E402

OPSET = 21
IR_VERSION = 10

_sessions = {}
_no_kernel = {}  # model bytes -> the Unsupported reason, so a refusal is not rebuilt per case
NATIVE_ONLY = "--native-only" in sys.argv[1:]
_logged = set()


def tensor_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def run_node(op_type, inputs, out_dtype, **attributes):
    """Runs one ONNX node on `inputs` (name -> array) and returns its single output.

    Raises kit.Unsupported when ONNX Runtime has no CPU kernel for these types.
    """
    node = helper.make_node(op_type, list(inputs), ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info("y", tensor_type(out_dtype), None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    key = model.SerializeToString()
    if key in _no_kernel:
        raise kit.Unsupported(_no_kernel[key])
    session = _sessions.get(key)
    if session is None:
        try:
            session = ort.InferenceSession(key, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - classify ONNX Runtime's refusals
            if "NOT_IMPLEMENTED" in str(e) or "Could not find an implementation" in str(e):
                types = ", ".join("%s %s" % (n, a.dtype) for n, a in inputs.items())
                _no_kernel[key] = "ONNX Runtime %s (CPU) has no %s kernel for %s" % (
                    ort.__version__, op_type, types)
                raise kit.Unsupported(_no_kernel[key]) from e
            raise
        _sessions[key] = session
    return session.run(None, {n: np.asarray(a, order="C") for n, a in inputs.items()})[0]


# Lossless stand-ins for element types the CPU provider has no kernel for. Each is tried, in
# order, only after ONNX Runtime refused the type itself (unless --native-only): `encode` maps the
# tensor to a type with a kernel, keeping what the operator looks at; `decode` maps values of
# that type back (for OneHot, whose output holds input values).

_SIGN_BIT_64 = np.uint64(1 << 63)

# ArgMax: the order of the values and their ties are kept (a monotonic injection).
ORDER_KEEPING = {
    "int16": [lambda a: a.astype(np.int32)],
    "uint16": [lambda a: a.astype(np.int32)],
    "uint32": [lambda a: a.astype(np.int64)],
    # Flipping the sign bit maps 0..2^64-1 onto INT64_MIN..INT64_MAX in order.
    "uint64": [lambda a: (a ^ _SIGN_BIT_64).view(np.int64)],
}

# NonZero: which elements are zero is kept (integers only: -0.0 has nonzero bits).
ZERO_KEEPING = {
    "int8": [lambda a: a.astype(np.int32)],
    "int16": [lambda a: a.astype(np.int32)],
    "uint16": [lambda a: a.astype(np.int32)],
    "uint32": [lambda a: a.astype(np.int64)],
    "uint64": [lambda a: a.view(np.int64)],
}

# OneHot values: (encode, decode) pairs that return every value bit for bit.
VALUE_KEEPING = {
    "float64": [(lambda a: a.view(np.int64), lambda y: y.view(np.float64))],
    "uint64": [(lambda a: a.view(np.int64), lambda y: y.view(np.uint64))],
    "int32": [(lambda a: a.astype(np.int64), lambda y: y.astype(np.int32))],
    "uint32": [(lambda a: a.astype(np.int64), lambda y: y.astype(np.uint32))],
    "int16": [(lambda a: a.astype(np.int64), lambda y: y.astype(np.int16))],
    "uint16": [(lambda a: a.astype(np.int64), lambda y: y.astype(np.uint16))],
    "int8": [(lambda a: a.astype(np.int64), lambda y: y.astype(np.int8))],
    "uint8": [(lambda a: a.astype(np.int64), lambda y: y.astype(np.uint8))],
}


def stand_ins(table, dtype, what):
    """The stand-ins of `table` for `dtype`, with a log line the first time one is needed."""
    found = [] if NATIVE_ONLY else table.get(np.dtype(dtype).name, [])
    if found and (what, np.dtype(dtype).name) not in _logged:
        _logged.add((what, np.dtype(dtype).name))
        kit.log("onnxruntime adapter: no CPU %s kernel for %s; using a lossless stand-in type"
                % (what, np.dtype(dtype).name))
    return found


def indices_as_int64(indices):
    """One-hot indices as int64; unsigned values above INT64_MAX (out of range for any depth)
    become INT64_MAX."""
    if indices.dtype == np.uint64:
        return np.minimum(indices, np.uint64(2**63 - 1)).astype(np.int64)
    return indices.astype(np.int64)


def one_hot_node(indices, depth, off_bits, on_bits, value_dtype, axis):
    """ONNX OneHot with values [off, on] (given as element bits) of `value_dtype`.

    Tries each depth type ONNX Runtime registers kernels for, with the values' own type first,
    then with its VALUE_KEEPING stand-ins. ONNX OneHot needs indices of rank 1 or more, so 0-D
    indices run as shape [1] with the new axis appended, then reshaped.
    """
    values = np.array([off_bits, on_bits]).view(value_dtype)
    scalar = indices.ndim == 0
    if scalar:
        indices, axis = indices.reshape(1), 1

    def attempt(encoded):
        for depth_dtype in (np.int64, np.float32, np.int32):
            if depth_dtype == np.float32 and depth > 2**24:
                continue
            try:
                return run_node("OneHot", {"indices": indices,
                                           "depth": np.array(depth, dtype=depth_dtype),
                                           "values": encoded}, encoded.dtype, axis=axis)
            except kit.Unsupported:
                continue
        return None

    y = attempt(values)
    if y is None:
        for encode, decode in stand_ins(VALUE_KEEPING, value_dtype, "OneHot"):
            y = attempt(encode(values))
            if y is not None:
                y = decode(y)
                break
    if y is None:
        raise kit.Unsupported(
            "ONNX Runtime %s (CPU) has no OneHot kernel for int64 indices with %s values (with "
            "any depth type)" % (ort.__version__, np.dtype(value_dtype).name)
        )
    return y.reshape(depth) if scalar else y


def run_with_stand_ins(op_type, name, x, table, out_dtype, **attributes):
    """run_node with input `name` = x, or, where ONNX Runtime has no kernel for x's type, with
    the first stand-in of `table` it has one for."""
    try:
        return run_node(op_type, {name: x}, out_dtype, **attributes)
    except kit.Unsupported as refusal:
        for encode in stand_ins(table, x.dtype, op_type):
            try:
                return run_node(op_type, {name: encode(x)}, out_dtype, **attributes)
            except kit.Unsupported:
                continue
        raise refusal


def dml_one_hot(case):
    op = case.operator
    axis = op["axis"]
    depth = op["output"]["sizes"][axis]
    indices = kit.squeeze_axis(indices_as_int64(case.input(0)), axis)
    off, on = kit.one_hot_values(case)
    value_dtype = kit.dtype_of(op["values"])
    y = one_hot_node(indices, depth, off, on, value_dtype, axis)
    write_bits(case.outputs[0], y)


def ov_one_hot(case):
    op = case.operator
    indices = indices_as_int64(case.input(0))
    on = case.input(2, bits=True)
    off = case.input(3, bits=True)
    y = one_hot_node(indices, op["depth_value"], off, on, kit.dtype_of(op["output"]), op["axis"])
    write_bits(case.outputs[0], y)


def write_bits(output, y):
    sizes = output.desc["sizes"]
    if list(y.shape) != list(sizes):
        raise RuntimeError("ONNX Runtime produced shape %s, the output has %s" % (list(y.shape), sizes))
    output.write(y.view(kit.BITS[y.dtype.itemsize]), bits=True)


def dml_argmax(case):
    op = case.operator
    x = case.input(0)
    perm, kept, count = kit.argmax_layout(x.shape, op["axes"])
    rows = np.transpose(x, perm).reshape(kept + [count])
    last = op["axis_direction"] == "DML_AXIS_DIRECTION_DECREASING"
    y = run_with_stand_ins("ArgMax", "data", rows, ORDER_KEEPING, np.int64, axis=len(kept),
                           keepdims=0, select_last_index=int(last))
    case.outputs[0].write(y.reshape(op["output"]["sizes"]))


def dml_nonzero(case):
    op = case.operator
    x = case.input(0)
    y = run_with_stand_ins("NonZero", "x", x, ZERO_KEEPING, np.int64)
    coords = y.T
    count = coords.shape[0]
    sizes = op["output_coordinates"]["sizes"]
    m, n = sizes[-2], sizes[-1]
    table = np.zeros((m, n), dtype=np.uint32)
    table[:count] = coords[:, coords.shape[1] - n:]
    case.outputs[0].write(np.full(op["output_count"]["sizes"], count, dtype=np.uint32))
    case.outputs[1].write(table.reshape(sizes), rows=count)


MAPPINGS = {
    "DML_ONE_HOT": dml_one_hot,
    "DML_ARGMAX": dml_argmax,
    "DML_NONZERO_COORDINATES": dml_nonzero,
    "OneHot-1": ov_one_hot,
}


def execute(case):
    kit.reject_invalid(case)
    MAPPINGS[case.kind](case)


def main():
    hello = {
        "name": "onnxruntime",
        "version": ort.__version__,
        "device": "CPUExecutionProvider (onnxruntime %s, onnx %s, opset %d%s)"
        % (ort.__version__, onnx.__version__, OPSET,
           ", native kernel types only" if NATIVE_ONLY else ""),
        "claims": ["4_1", "opset1"],
        "operators": list(MAPPINGS),
    }
    kit.serve(hello, execute, PROTOCOL_OUT)


if __name__ == "__main__":
    main()
