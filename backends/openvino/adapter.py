#!/usr/bin/env python3
"""OpenVINO (CPU plugin) as an opconform backend, over backend protocol v1.

Each case becomes a one-operation `ov.Model` compiled with `ov.Core().compile_model(model,
"CPU")` (compiled models are cached per signature):

  OneHot-1                 openvino.opset1.one_hot: indices, on_value and off_value as
                           parameters, depth as a constant (OpenVINO needs it for the shape).
  DML_ONE_HOT              openvino.opset16.one_hot (OneHot-16): the IndicesTensor without its
                           size-1 Axis dimension, depth = the OutputTensor's Axis size, on/off
                           read from the ValuesTensor as the spec says, axis = Axis, and
                           negative_indices_mode "normalize" for signed indices from 3_0 on
                           ("ignore_negative" otherwise). Indices keep their type.
  DML_NONZERO_COORDINATES  openvino.opset3.non_zero (i64), whose [rank, count] result is
                           transposed into DML's [count, N] rows (the last N coordinates).
  DML_ARGMAX               openvino.opset11.topk with k = 1, mode "max", stable=True (so the
                           first of equal maxima wins; TopK-11 allows stable only with a sort,
                           so sort is "value", which means nothing for k = 1), index element
                           type i64 for 64-bit outputs and i32 otherwise. Several axes are moved
                           last and flattened (transpose + reshape); DECREASING reverses the
                           flattened axis first and maps the index back (count - 1 - index).

Inputs arrive with strides and are materialised with numpy first; outputs are written back
through the output strides. Descriptors invalid at the requested level are rejected by rule id
with the shared validator in tools/protocol_v1.py. Where OpenVINO refuses a type (an
exception while building or compiling), the case is answered `unsupported` with its reason.

Run: opconform certify --backend-cmd ".venv/bin/python backends/openvino/adapter.py"
                           --baseline backends/openvino/baseline.yaml
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside tools/protocol_v1.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

import protocol_v1 as kit  # noqa: E402 - the protocol loop, strides and the validator

PROTOCOL_OUT = kit.protocol_stdout()

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import openvino.opset1 as opset1  # noqa: E402
import openvino.opset3 as opset3  # noqa: E402
import openvino.opset11 as opset11  # noqa: E402
import openvino.opset16 as opset16  # noqa: E402

CORE = ov.Core()
_compiled = {}


def compiled(key, build):
    """The compiled model for `key`, built with build() -> ov.Model on first use.

    Raises kit.Unsupported when OpenVINO refuses to build or compile it.
    """
    model = _compiled.get(key)
    if model is None:
        try:
            model = CORE.compile_model(build(), "CPU")
        except Exception as e:  # noqa: BLE001 - OpenVINO reports refusals as plain exceptions
            kit.log("OpenVINO refused %r: %s" % (key, e))
            reason = "OpenVINO %s (CPU) refused %s: %s" % (ov.__version__, key[0], condense(e))
            raise kit.Unsupported(reason) from e
        _compiled[key] = model
    return model


def condense(error):
    """OpenVINO's multi-line exception text on one line, without the source-location lines."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("Exception from src/")] or lines
    text = " | ".join(useful) or type(error).__name__
    return text if len(text) <= 400 else text[:400] + "..."


def infer(model, inputs):
    result = model([np.asarray(a, order="C") for a in inputs])
    return np.asarray(result[model.output(0)])


def one_hot(opset, indices, depth, depth_dtype, on_bits, off_bits, value_dtype, axis, mode=None):
    """OneHot with indices, on and off as parameters and depth as a constant."""
    on = np.asarray(on_bits).view(value_dtype).reshape(())
    off = np.asarray(off_bits).view(value_dtype).reshape(())
    key = ("OneHot", opset.__name__, indices.dtype.str, indices.shape, depth, np.dtype(depth_dtype).str,
           np.dtype(value_dtype).str, axis, mode)

    def build():
        p_indices = opset.parameter(list(indices.shape), indices.dtype)
        p_on = opset.parameter([], value_dtype)
        p_off = opset.parameter([], value_dtype)
        depth_const = opset.constant(np.array(depth, dtype=depth_dtype))
        if mode is None:
            node = opset.one_hot(p_indices, depth_const, p_on, p_off, axis)
        else:
            node = opset.one_hot(p_indices, depth_const, p_on, p_off, axis, negative_indices_mode=mode)
        return ov.Model([node], [p_indices, p_on, p_off], "one_hot")

    return infer(compiled(key, build), [indices, on, off])


def write_bits(output, y):
    sizes = output.desc["sizes"]
    y = np.asarray(y, dtype=kit.dtype_of(output.desc))
    if list(y.shape) != list(sizes):
        raise RuntimeError("OpenVINO produced shape %s, the output has %s" % (list(y.shape), sizes))
    output.write(y.view(kit.BITS[y.dtype.itemsize]), bits=True)


def dml_one_hot(case):
    op = case.operator
    axis = op["axis"]
    indices = kit.squeeze_axis(case.input(0), axis)
    off, on = kit.one_hot_values(case)
    signed = indices.dtype.kind == "i"
    mode = "normalize" if signed and kit.level_at_least(case.level, ("dml", 0x3000)) else "ignore_negative"
    depth = op["output"]["sizes"][axis]
    y = one_hot(opset16, indices, depth, np.int64, on, off, kit.dtype_of(op["values"]), axis, mode)
    write_bits(case.outputs[0], y)


def ov_one_hot(case):
    op = case.operator
    indices = case.input(0)
    y = one_hot(opset1, indices, op["depth_value"], kit.dtype_of(op["depth"]), case.input(2, bits=True),
                case.input(3, bits=True), kit.dtype_of(op["output"]), op["axis"])
    write_bits(case.outputs[0], y)


def dml_argmax(case):
    op = case.operator
    x = case.input(0)
    perm, kept, count = kit.argmax_layout(x.shape, op["axes"])
    rows = np.transpose(x, perm).reshape(kept + [count])
    last = op["axis_direction"] == "DML_AXIS_DIRECTION_DECREASING"
    if last:
        rows = np.flip(rows, -1)
    index_type = "i64" if kit.dtype_of(op["output"]).itemsize == 8 else "i32"
    key = ("TopK", rows.dtype.str, rows.shape, index_type)

    def build():
        data = opset11.parameter(list(rows.shape), rows.dtype)
        node = opset11.topk(data, opset11.constant(np.int64(1)), len(kept), "max", "value",
                            index_type, stable=True)
        return ov.Model([node.output(1)], [data], "argmax")

    index = infer(compiled(key, build), [rows]).astype(np.int64)
    if last:
        index = count - 1 - index
    case.outputs[0].write(index.reshape(op["output"]["sizes"]))


def dml_nonzero(case):
    op = case.operator
    x = case.input(0)
    key = ("NonZero", x.dtype.str, x.shape)

    def build():
        data = opset3.parameter(list(x.shape), x.dtype)
        return ov.Model([opset3.non_zero(data, "i64")], [data], "nonzero")

    coords = infer(compiled(key, build), [x]).reshape(x.ndim, -1).T
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
    try:
        kit.log("openvino adapter: CPU plugin on %s" % CORE.get_property("CPU", "FULL_DEVICE_NAME"))
    except Exception:  # noqa: BLE001 - the name is only logged
        pass
    hello = {
        "name": "openvino",
        "version": ov.__version__,
        # Not the processor's name: reports stay the same from one machine to the next.
        "device": "CPU plugin",
        "claims": ["4_1", "opset1"],
        "operators": list(MAPPINGS),
    }
    kit.serve(hello, execute, PROTOCOL_OUT)


if __name__ == "__main__":
    main()
