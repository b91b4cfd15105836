"""Levels and the descriptor validator: every descriptor rule of specs/*.yaml at the
requested level, by rule id (docs/backend-protocol.md, section 6)."""

from .errors import InvalidArgument
from .tensors import min_buffer_bytes

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
