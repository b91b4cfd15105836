"""Data types, tensor descriptions, buffers viewed through strides, and output buffers
(docs/backend-protocol.md, section 3)."""

import numpy as np

from .errors import ProtocolViolation

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
