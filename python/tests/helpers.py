"""Descriptors and requests shared by the tests."""

import base64


def desc(data_type, sizes, strides=None, total=None):
    """A tensor description; `total` defaults to the packed size rounded up to 4 bytes."""
    size = {"FLOAT32": 4, "UINT32": 4, "FLOAT16": 2, "UINT8": 1, "INT64": 8, "INT32": 4}[data_type]
    count = 1
    for s in sizes:
        count *= s
    if total is None:
        total = (count * size + 3) // 4 * 4
    return {"data_type": data_type, "sizes": list(sizes), "strides": strides,
            "total_tensor_size_in_bytes": total}


def argmax_operator(axes=(1,), level_sizes=(2, 3)):
    """A DML_ARGMAX descriptor over a FLOAT32 input reducing `axes`."""
    out_sizes = [1 if i in axes else s for i, s in enumerate(level_sizes)]
    return {"operator": "DML_ARGMAX", "input": desc("FLOAT32", level_sizes),
            "output": desc("UINT32", out_sizes), "axes": list(axes),
            "axis_direction": "DML_AXIS_DIRECTION_INCREASING"}


def execute_request(operator, inputs, rid=7, level="4_1", poison=0xAB):
    """An execute request: `inputs` as bytes in descriptor order, outputs poisoned."""
    b64 = lambda data: base64.b64encode(data).decode("ascii")  # noqa: E731
    names = {"DML_ARGMAX": ([("InputTensor", "input")], [("OutputTensor", "output")])}
    ins, outs = names[operator["operator"]]
    return {
        "type": "execute", "id": rid, "level": level, "operator": operator,
        "inputs": [{"name": n, "desc": operator[k], "data": b64(d)}
                   for (n, k), d in zip(ins, inputs)],
        "outputs": [{"name": n, "desc": operator[k],
                     "data": b64(bytes([poison]) * operator[k]["total_tensor_size_in_bytes"])}
                    for n, k in outs],
    }
