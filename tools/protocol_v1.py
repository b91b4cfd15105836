"""Backend protocol v1 (docs/backend-protocol.md) for Python backends: the shared toolkit.

Every Python backend in this repository (tools/broken_backend.py, backends/onnxruntime/adapter.py,
backends/openvino/adapter.py) imports this module, so they all frame messages, read and write
tensors through strides, and reject invalid descriptors the same way. Only numpy is needed.

What it holds:

  protocol_stdout()   reserve fd 1 for protocol lines, send everything else to stderr; call it
                      before importing chatty libraries
  serve(hello, execute, out)
                      the protocol loop: handshake, one reply per execute, shutdown
  Case, Output        a decoded execute request; output buffers that start from the bytes
                      opconform sent (poison), so unwritten elements stay visible
  view(desc, buffer)  the elements of a buffer through the tensor's strides
  validate(), reject_invalid(case)
                      every descriptor rule of specs/*.yaml at the requested level, by rule id
  Unsupported, InvalidArgument
                      raise these from execute() for `unsupported` and `invalid_argument`
                      replies (any other exception is answered `internal`)
  one_hot_values, argmax_layout, squeeze_axis
                      readings of the documents shared by the operator mappings

A minimal backend:

    import protocol_v1 as kit
    out = kit.protocol_stdout()

    def execute(case):
        kit.reject_invalid(case)
        ...                                   # compute, then case.outputs[i].write(values)

    kit.serve({"name": "mine", "version": "1", "device": "cpu", "claims": ["4_1"],
               "operators": ["DML_ARGMAX"]}, execute, out)
"""

import base64
import json
import os
import sys
import traceback

import numpy as np

PROTOCOL_VERSION = 1

# --------------------------------------------------------------------------------------------
# Errors a backend answers with
# --------------------------------------------------------------------------------------------


class Unsupported(Exception):
    """The backend lacks a type, rank or feature the case needs (`unsupported`)."""


class InvalidArgument(Exception):
    """The descriptor is invalid at the requested level (`invalid_argument`)."""

    def __init__(self, rules, message):
        super().__init__(message)
        self.rules = list(rules)
        self.message = message


class ProtocolViolation(Exception):
    """The request itself is malformed (answered as `internal`)."""


# --------------------------------------------------------------------------------------------
# Data types, tensors and strides
# --------------------------------------------------------------------------------------------

DTYPES = {
    "FLOAT64": np.dtype("<f8"),
    "FLOAT32": np.dtype("<f4"),
    "FLOAT16": np.dtype("<f2"),
    "INT64": np.dtype("<i8"),
    "INT32": np.dtype("<i4"),
    "INT16": np.dtype("<i2"),
    "INT8": np.dtype("i1"),
    "UINT64": np.dtype("<u8"),
    "UINT32": np.dtype("<u4"),
    "UINT16": np.dtype("<u2"),
    "UINT8": np.dtype("u1"),
}

# Unsigned integers of each element size: values are copied bit for bit through these.
BITS = {1: np.dtype("u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4"), 8: np.dtype("<u8")}


def dtype_of(desc):
    """The numpy dtype (little-endian) of a tensor description."""
    return DTYPES[desc["data_type"]]


def strides_of(desc):
    """Strides in elements: the given ones, or packed row-major."""
    if desc.get("strides") is not None:
        return list(desc["strides"])
    strides = [1] * len(desc["sizes"])
    for i in range(len(desc["sizes"]) - 2, -1, -1):
        strides[i] = strides[i + 1] * desc["sizes"][i + 1]
    return strides


def min_buffer_bytes(desc):
    """DMLCalcBufferTensorSize in unbounded integers: the minimum TotalTensorSizeInBytes."""
    size = dtype_of(desc).itemsize
    sizes = desc["sizes"]
    if desc.get("strides") is None:
        count = 1
        for s in sizes:
            count *= s
    elif 0 in sizes:
        count = 0
    else:
        count = sum((s - 1) * st for s, st in zip(sizes, desc["strides"])) + 1
    return (count * size + 3) // 4 * 4


def view(desc, buffer, bits=False):
    """A numpy view of the elements of `buffer` (bytes or bytearray) through the strides.

    With bits=True the view has the unsigned integer type of the element size, for bit-exact
    copies. The view is writable when `buffer` is a bytearray.
    """
    dtype = dtype_of(desc)
    if bits:
        dtype = BITS[dtype.itemsize]
    flat = np.frombuffer(buffer, dtype=dtype, count=len(buffer) // dtype.itemsize)
    sizes = tuple(desc["sizes"])
    strides = strides_of(desc)
    if 0 not in sizes:
        last = sum((s - 1) * st for s, st in zip(sizes, strides))
        if last >= flat.size:
            raise ProtocolViolation(
                "a tensor of sizes %s strides %s needs %d elements; its buffer holds %d"
                % (list(sizes), strides, last + 1, flat.size)
            )
    return np.lib.stride_tricks.as_strided(
        flat,
        shape=sizes,
        strides=tuple(st * dtype.itemsize for st in strides),
        writeable=isinstance(buffer, bytearray),
    )


class Output:
    """An output buffer, starting from the bytes opconform sent (bytes not written stay)."""

    def __init__(self, name, desc, data):
        self.name = name
        self.desc = desc
        self.data = bytearray(data)
        self.original = bytes(data)
        # Byte offset of the last element written (row-major order), for unwritten-element.
        self.last_written = None

    def write(self, values, rows=None, bits=False):
        """Writes `values` (shaped as the tensor) through the strides.

        rows: write only the first `rows` entries along the second-to-last dimension (the
        NonZeroCoordinates rows up to the count). bits: `values` holds the element bits as
        unsigned integers of the element size.
        """
        target = view(self.desc, self.data, bits=bits)
        values = np.asarray(values)
        if not bits:
            values = values.astype(dtype_of(self.desc), copy=False)
        values = np.broadcast_to(values, target.shape)
        if rows is None:
            target[...] = values
            coords = [s - 1 for s in self.desc["sizes"]]
            written = target.size > 0
        else:
            target[..., :rows, :] = values[..., :rows, :]
            coords = [s - 1 for s in self.desc["sizes"]]
            coords[-2] = rows - 1
            written = rows > 0 and target.size > 0
        if written:
            offset = sum(c * st for c, st in zip(coords, strides_of(self.desc)))
            self.last_written = offset * dtype_of(self.desc).itemsize

    def unwrite_last(self):
        """Restores the last element written to the bytes it held before."""
        if self.last_written is None:
            return False
        start = self.last_written
        end = start + dtype_of(self.desc).itemsize
        self.data[start:end] = self.original[start:end]
        return True


class Case:
    """One execute request, decoded: the operator, the level, the inputs and the outputs."""

    def __init__(self, request):
        self.id = request["id"]
        self.level = request["level"]
        self.operator = request["operator"]
        self.kind = self.operator["operator"]
        if self.kind not in OPERATORS:
            raise Unsupported("unknown operator %r" % self.kind)
        names = OPERATORS[self.kind]
        self.inputs = self._tensors(request["inputs"], names["inputs"], "inputs")
        self.outputs = [
            Output(name, desc, data)
            for name, desc, data in self._tensors(request["outputs"], names["outputs"], "outputs")
        ]

    @staticmethod
    def _tensors(payloads, expected, what):
        got = [p["name"] for p in payloads]
        if got != [name for name, _ in expected]:
            raise ProtocolViolation("%s are %s, expected %s" % (what, got, [n for n, _ in expected]))
        tensors = []
        for payload in payloads:
            data = base64.b64decode(payload["data"])
            total = payload["desc"]["total_tensor_size_in_bytes"]
            if len(data) != total:
                raise ProtocolViolation(
                    "%s holds %d bytes, total_tensor_size_in_bytes is %d"
                    % (payload["name"], len(data), total)
                )
            tensors.append((payload["name"], payload["desc"], data))
        return tensors

    def input(self, index, bits=False):
        """Input `index` materialised as a contiguous array of its shape."""
        _, desc, data = self.inputs[index]
        return np.array(view(desc, data, bits=bits))

    def input_desc(self, index):
        return self.inputs[index][1]


# --------------------------------------------------------------------------------------------
# Levels and the descriptor validator (specs/*.yaml)
# --------------------------------------------------------------------------------------------


def parse_level(text):
    """("dml", 0x4100) for "4_1" or "DML_FEATURE_LEVEL_4_1"; ("opset", 16) for "opset16"."""
    if text.startswith("opset"):
        return ("opset", int(text[5:]))
    short = text[len("DML_FEATURE_LEVEL_"):] if text.startswith("DML_FEATURE_LEVEL_") else text
    major, minor = short.split("_")
    return ("dml", (int(major) << 12) | (int(minor) << 8))


def level_at_least(level, minimum):
    """True when `level` (text) is in the family of `minimum` (parsed) and at or above it."""
    family, value = parse_level(level)
    return family == minimum[0] and value >= minimum[1]


def _table(dims, types):
    return (dims[0], dims[1], types.split())


_ONE_HOT_VALUES_2_1 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_ONE_HOT_VALUES_4_1 = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
_ARGMAX_INPUT_3_0 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_ARGMAX_INPUT_4_1 = "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
_ARGMAX_OUTPUT = "INT64 INT32 UINT64 UINT32"
_NONZERO_INPUT = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_ALL_TYPES = _ONE_HOT_VALUES_4_1

# Per operator: rule-id prefix, family, tensor names with their descriptor keys (inputs, then
# outputs), and the support tables (each from its level to the next), from the documents.
OPERATORS = {
    "DML_ONE_HOT": {
        "prefix": "ONE_HOT",
        "inputs": [("IndicesTensor", "indices"), ("ValuesTensor", "values")],
        "outputs": [("OutputTensor", "output")],
        "tables": [
            (("dml", 0x2000), {
                "IndicesTensor": _table((4, 4), "UINT32"),
                "ValuesTensor": _table((4, 4), "FLOAT32 FLOAT16"),
                "OutputTensor": _table((4, 4), "FLOAT32 FLOAT16"),
            }),
            (("dml", 0x2100), {
                "IndicesTensor": _table((4, 4), "UINT32"),
                "ValuesTensor": _table((4, 4), _ONE_HOT_VALUES_2_1),
                "OutputTensor": _table((4, 4), _ONE_HOT_VALUES_2_1),
            }),
            (("dml", 0x3000), {
                "IndicesTensor": _table((1, 8), "INT64 INT32 UINT64 UINT32"),
                "ValuesTensor": _table((1, 8), _ONE_HOT_VALUES_2_1),
                "OutputTensor": _table((1, 8), _ONE_HOT_VALUES_2_1),
            }),
            (("dml", 0x4100), {
                "IndicesTensor": _table((1, 8), "INT64 INT32 UINT64 UINT32"),
                "ValuesTensor": _table((1, 8), _ONE_HOT_VALUES_4_1),
                "OutputTensor": _table((1, 8), _ONE_HOT_VALUES_4_1),
            }),
        ],
    },
    "DML_NONZERO_COORDINATES": {
        "prefix": "NONZERO_COORDINATES",
        "inputs": [("InputTensor", "input")],
        "outputs": [("OutputCountTensor", "output_count"),
                    ("OutputCoordinatesTensor", "output_coordinates")],
        "tables": [
            (("dml", 0x3000), {
                "InputTensor": _table((4, 5), _NONZERO_INPUT),
                "OutputCountTensor": _table((4, 5), "UINT32"),
                "OutputCoordinatesTensor": _table((4, 5), "UINT32"),
            }),
            (("dml", 0x4000), {
                "InputTensor": _table((1, 8), _NONZERO_INPUT),
                "OutputCountTensor": _table((1, 8), "UINT32"),
                "OutputCoordinatesTensor": _table((2, 8), "UINT32"),
            }),
        ],
    },
    "DML_ARGMAX": {
        "prefix": "ARGMAX",
        "inputs": [("InputTensor", "input")],
        "outputs": [("OutputTensor", "output")],
        "tables": [
            (("dml", 0x3000), {
                "InputTensor": _table((1, 8), _ARGMAX_INPUT_3_0),
                "OutputTensor": _table((1, 8), _ARGMAX_OUTPUT),
            }),
            (("dml", 0x4100), {
                "InputTensor": _table((1, 8), _ARGMAX_INPUT_4_1),
                "OutputTensor": _table((1, 8), _ARGMAX_OUTPUT),
            }),
        ],
    },
    "OneHot-1": {
        "prefix": "ONEHOT1",
        "inputs": [("indices", "indices"), ("depth", "depth"), ("on_value", "on_value"),
                   ("off_value", "off_value")],
        "outputs": [("output", "output")],
        "tables": [
            (("opset", 1), {
                "indices": _table((0, None), "INT32 INT64"),  # no rank limit in the page
                "depth": _table((0, 0), "INT32 INT64"),
                "on_value": _table((0, 0), _ALL_TYPES),
                "off_value": _table((0, 0), _ALL_TYPES),
                "output": _table((1, None), _ALL_TYPES),
            }),
        ],
    },
}


def named_tensors(operator):
    """[(spec name, desc)] for every tensor of a descriptor, inputs first."""
    spec = OPERATORS[operator["operator"]]
    return [(name, operator[key]) for name, key in spec["inputs"] + spec["outputs"]]


def count_of(sizes):
    count = 1
    for s in sizes:
        count *= s
    return count


def validate(operator, level):
    """Every rule `operator` breaks at `level`: a list of (rule id, detail), in rule order."""
    kind = operator["operator"]
    spec = OPERATORS[kind]
    found = []

    def require(holds, rule, detail):
        if not holds:
            found.append((rule, detail))

    # DML_BUFFER_TENSOR_DESC rules, for every tensor of a DirectML operator (they are not
    # OpenVINO rules).
    is_dml = kind.startswith("DML_")
    for name, desc in named_tensors(operator) if is_dml else []:
        sizes = desc["sizes"]
        if is_dml:
            for i, s in enumerate(sizes):
                require(s != 0, "TENSOR.SIZES_NONZERO", "%s.Sizes[%d] is 0" % (name, i))
            require(count_of(sizes) <= 2**32 - 1, "TENSOR.ELEMENT_COUNT_32BIT",
                    "%s has %d elements" % (name, count_of(sizes)))
        strides = desc.get("strides")
        if strides is not None and len(strides) != len(sizes):
            require(False, "TENSOR.STRIDES_COUNT",
                    "%s has %d strides for %d sizes" % (name, len(strides), len(sizes)))
            continue
        minimum = min_buffer_bytes(desc)
        total = desc["total_tensor_size_in_bytes"]
        require(minimum <= 2**64 - 1 and total >= minimum, "TENSOR.TOTAL_SIZE",
                "%s.TotalTensorSizeInBytes is %d, at least %d needed" % (name, total, minimum))

    # Availability and the support table in force at the level.
    parsed = parse_level(level)
    tables = [t for start, t in spec["tables"]
              if start[0] == parsed[0] and parsed[1] >= start[1]]
    if not tables:
        require(False, spec["prefix"] + ".AVAILABILITY", "%s is not available at %s" % (kind, level))
    else:
        table = tables[-1]
        for name, desc in named_tensors(operator):
            low, high, types = table[name]
            rank = len(desc["sizes"])
            require(low <= rank and (high is None or rank <= high),
                    spec["prefix"] + ".SUPPORT_DIMENSION_COUNT",
                    "%s has %d dimensions, %s supported at %s"
                    % (name, rank, "%d or more" % low if high is None else "%d to %d" % (low, high),
                       level))
            require(desc["data_type"] in types, spec["prefix"] + ".SUPPORT_DATA_TYPE",
                    "%s is %s, not one of %s at %s" % (name, desc["data_type"], types, level))

    CHECKS[kind](operator, require)
    return found


def _check_one_hot(op, require):
    indices, values, output, axis = op["indices"], op["values"], op["output"], op["axis"]
    rank = len(indices["sizes"])
    for name, desc in (("ValuesTensor", values), ("OutputTensor", output)):
        require(len(desc["sizes"]) == rank, "ONE_HOT.DIMENSION_COUNT_EQUAL",
                "%s has %d dimensions, IndicesTensor %d" % (name, len(desc["sizes"]), rank))
    require(output["data_type"] == values["data_type"], "ONE_HOT.OUTPUT_VALUES_SAME_TYPE",
            "OutputTensor is %s, ValuesTensor %s" % (output["data_type"], values["data_type"]))
    require(count_of(values["sizes"]) >= 2, "ONE_HOT.VALUES_ELEMENT_COUNT",
            "ValuesTensor has %d element(s)" % count_of(values["sizes"]))
    require(axis < rank, "ONE_HOT.AXIS_RANGE", "Axis %d, IndicesTensor has %d dimensions" % (axis, rank))
    if axis >= rank or len(output["sizes"]) != rank:
        return
    for i in range(rank):
        if i != axis:
            require(indices["sizes"][i] == output["sizes"][i], "ONE_HOT.INDICES_SIZES",
                    "IndicesTensor.Sizes[%d] is %d, OutputTensor's %d"
                    % (i, indices["sizes"][i], output["sizes"][i]))
    require(indices["sizes"][axis] == 1, "ONE_HOT.INDICES_AXIS_SIZE",
            "IndicesTensor.Sizes[%d] (Axis) is %d" % (axis, indices["sizes"][axis]))
    require(output["sizes"][axis] > 0, "ONE_HOT.OUTPUT_AXIS_SIZE",
            "OutputTensor.Sizes[%d] (Axis) is 0" % axis)


def effective_rank(sizes):
    """DimensionCount without the leading size-1 dimensions."""
    lead = 0
    while lead < len(sizes) and sizes[lead] == 1:
        lead += 1
    return len(sizes) - lead


def _check_nonzero(op, require):
    count, coords, inp = op["output_count"], op["output_coordinates"], op["input"]
    require(all(s == 1 for s in count["sizes"]), "NONZERO_COORDINATES.COUNT_SCALAR",
            "OutputCountTensor sizes %s" % count["sizes"])
    require(count["data_type"] == "UINT32", "NONZERO_COORDINATES.COUNT_TYPE",
            "OutputCountTensor is %s" % count["data_type"])
    sizes = coords["sizes"]
    require(len(sizes) >= 2 and all(s == 1 for s in sizes[:-2]),
            "NONZERO_COORDINATES.COORDINATES_SHAPE", "OutputCoordinatesTensor sizes %s" % sizes)
    if len(sizes) < 2:
        return
    m, n = sizes[-2], sizes[-1]
    require(m == count_of(inp["sizes"]), "NONZERO_COORDINATES.COORDINATES_M",
            "M is %d, the InputTensor has %d elements" % (m, count_of(inp["sizes"])))
    low, high = effective_rank(inp["sizes"]), len(inp["sizes"])
    require(low <= n <= high, "NONZERO_COORDINATES.COORDINATES_N",
            "N is %d, expected %d to %d" % (n, low, high))


def _check_argmax(op, require):
    inp, out, axes = op["input"], op["output"], op["axes"]
    rank = len(inp["sizes"])
    require(len(out["sizes"]) == rank, "ARGMAX.DIMENSION_COUNT_EQUAL",
            "OutputTensor has %d dimensions, InputTensor %d" % (len(out["sizes"]), rank))
    require(len(axes) > 0, "ARGMAX.AXIS_COUNT", "AxisCount is 0")
    for i, axis in enumerate(axes):
        require(axis < rank, "ARGMAX.AXES_RANGE", "Axes[%d] is %d, rank %d" % (i, axis, rank))
        require(axis not in axes[:i], "ARGMAX.AXES_DISTINCT", "Axes[%d] (%d) repeats" % (i, axis))
    if len(out["sizes"]) != rank:
        return
    for i in range(rank):
        expected = 1 if i in axes else inp["sizes"][i]
        require(out["sizes"][i] == expected, "ARGMAX.OUTPUT_SIZES",
                "OutputTensor.Sizes[%d] is %d, expected %d" % (i, out["sizes"][i], expected))


def ov_output_sizes(op):
    """The OneHot-1 output shape (depth not bounded to 32 bits, so no output matches a larger one), or None when axis or depth are out of range."""
    n = len(op["indices"]["sizes"])
    axis = op["axis"] + n + 1 if op["axis"] < 0 else op["axis"]
    depth = op["depth_value"]
    if not 0 <= axis <= n or not 0 < depth:  # a depth beyond 32 bits still gets a shape
        return None
    sizes = list(op["indices"]["sizes"])
    sizes.insert(axis, depth)
    return sizes


def _check_ov_one_hot(op, require):
    require(op["depth"]["data_type"] == op["indices"]["data_type"], "ONEHOT1.T1_SAME_TYPE",
            "depth is %s, indices %s" % (op["depth"]["data_type"], op["indices"]["data_type"]))
    require(op["depth_value"] > 0, "ONEHOT1.DEPTH_POSITIVE", "depth is %d" % op["depth_value"])
    on_type = op["on_value"]["data_type"]
    require(op["off_value"]["data_type"] == on_type, "ONEHOT1.VALUES_SAME_TYPE",
            "off_value is %s, on_value %s" % (op["off_value"]["data_type"], on_type))
    require(op["output"]["data_type"] == on_type, "ONEHOT1.VALUES_SAME_TYPE",
            "output is %s, on_value %s" % (op["output"]["data_type"], on_type))
    n = len(op["indices"]["sizes"])
    require(-(n + 1) <= op["axis"] <= n, "ONEHOT1.AXIS_RANGE",
            "axis %d, expected %d to %d" % (op["axis"], -(n + 1), n))
    expected = ov_output_sizes(op)
    if expected is not None:
        require(op["output"]["sizes"] == expected, "ONEHOT1.OUTPUT_SHAPE",
                "output shape %s, expected %s" % (op["output"]["sizes"], expected))


CHECKS = {
    "DML_ONE_HOT": _check_one_hot,
    "DML_NONZERO_COORDINATES": _check_nonzero,
    "DML_ARGMAX": _check_argmax,
    "OneHot-1": _check_ov_one_hot,
}


def reject_invalid(case):
    """Raises InvalidArgument naming every broken rule, if the descriptor is invalid."""
    found = validate(case.operator, case.level)
    if found:
        rules = []
        for rule, _ in found:
            if rule not in rules:
                rules.append(rule)
        raise InvalidArgument(rules, "; ".join("%s: %s" % f for f in found))


# --------------------------------------------------------------------------------------------
# Helpers shared by the operators' mappings
# --------------------------------------------------------------------------------------------


def one_hot_values(case):
    """(OffValue, OnValue) of a DML_ONE_HOT ValuesTensor as element bits, read through strides:
    OffValue at coordinates all 0, OnValue at coordinate 1 of the innermost dimension whose
    size exceeds 1."""
    values = case.input(1, bits=True)
    sizes = case.input_desc(1)["sizes"]
    on = [0] * len(sizes)
    inner = max(i for i, s in enumerate(sizes) if s > 1)
    on[inner] = 1
    return values[(0,) * len(sizes)], values[tuple(on)]


def argmax_layout(shape, axes):
    """(permutation, kept shape, reduced count): moving the reduced axes (in increasing order)
    last and flattening them gives a row-major flat index within the reduced sub-tensor."""
    reduced = sorted(set(axes))
    kept = [d for d in range(len(shape)) if d not in reduced]
    count = count_of([shape[d] for d in reduced])
    return kept + reduced, [shape[d] for d in kept], count


def squeeze_axis(indices, axis):
    """DML one-hot indices without their size-1 Axis dimension."""
    return indices.reshape([s for i, s in enumerate(indices.shape) if i != axis])


# --------------------------------------------------------------------------------------------
# The protocol loop
# --------------------------------------------------------------------------------------------


def protocol_stdout():
    """Reserves the real stdout for protocol lines and sends everything else (print, C
    libraries writing to fd 1) to stderr. Call it before importing chatty libraries."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8")


def log(message):
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def serve(hello, execute, out=None):
    """Runs the protocol v1 loop on stdin until shutdown or end of input.

    hello: the hello reply fields (name, version, device, claims, operators).
    execute(case) -> None: validates, runs and writes case.outputs, or raises Unsupported,
    InvalidArgument or any other exception (answered as internal).
    """
    out = out or protocol_stdout()

    def send(message):
        out.write(json.dumps(message, separators=(",", ":")) + "\n")
        out.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        kind = request.get("type")
        if kind == "hello":
            offered = request.get("protocol", 0)
            if offered < PROTOCOL_VERSION:
                send({"type": "error", "kind": "unsupported",
                      "message": "this backend speaks protocol %d only" % PROTOCOL_VERSION})
                return
            send(dict({"type": "hello", "protocol": PROTOCOL_VERSION}, **hello))
        elif kind == "execute":
            send(answer(request, execute))
        elif kind == "shutdown":
            return
        else:
            log("ignoring a %r message" % kind)


def answer(request, execute):
    """The reply to one execute request."""
    rid = request.get("id")
    try:
        case = Case(request)
        execute(case)
        return {
            "type": "result",
            "id": rid,
            "outputs": [{"name": o.name, "data": base64.b64encode(bytes(o.data)).decode("ascii")}
                        for o in case.outputs],
        }
    except Unsupported as e:
        return {"type": "error", "id": rid, "kind": "unsupported", "message": str(e)}
    except InvalidArgument as e:
        return {"type": "error", "id": rid, "kind": "invalid_argument", "message": e.message,
                "rules": e.rules}
    except Exception as e:  # noqa: BLE001 - every other failure is the backend's own
        log(traceback.format_exc())
        return {"type": "error", "id": rid, "kind": "internal",
                "message": "%s: %s" % (type(e).__name__, e)}
