"""Readings of the operator documents shared by the operators' mappings."""

from .validation import count_of

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
