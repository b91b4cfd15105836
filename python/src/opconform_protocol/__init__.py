"""Backend protocol v1 (docs/backend-protocol.md) for Python backends: the shared toolkit.

Every Python backend in the opconform repository (tools/broken_backend.py,
backends/onnxruntime/adapter.py, backends/openvino/adapter.py) imports this package, so they
all frame messages, read and write tensors through strides, and reject invalid descriptors the
same way. Only numpy is needed. Install it with `pip install -e python/` from a checkout.

What it holds (every name is exported here; the modules hold them by topic):

  server:     protocol_stdout()  reserve fd 1 for protocol lines, send everything else to
                                 stderr; call it before importing chatty libraries
              serve(hello, execute, out)
                                 the protocol loop: handshake, one reply per execute, shutdown
  messages:   Case, answer()     a decoded execute request and the reply to it;
              reply_line_limit() the caps opconform puts on reply lines
  tensors:    Output             output buffers that start from the bytes opconform sent
                                 (poison), so unwritten elements stay visible
              view(desc, buffer) the elements of a buffer through the tensor's strides
  validation: validate(), reject_invalid(case)
                                 every descriptor rule of specs/*.yaml at the requested level
  errors:     Unsupported, InvalidArgument
                                 raise these from execute() for `unsupported` and
                                 `invalid_argument` replies (any other exception is `internal`)
  readings:   one_hot_values, argmax_layout, squeeze_axis
                                 readings of the documents shared by the operator mappings

A minimal backend:

    import opconform_protocol as kit
    out = kit.protocol_stdout()

    def execute(case):
        kit.reject_invalid(case)
        ...                                   # compute, then case.outputs[i].write(values)

    kit.serve({"name": "mine", "version": "1", "device": "cpu", "claims": ["4_1"],
               "operators": ["DML_ARGMAX"]}, execute, out)
"""

from .errors import InvalidArgument, ProtocolViolation, Unsupported
from .log import log
from .messages import (
    HELLO_LINE_MAX_BYTES,
    PROTOCOL_VERSION,
    REPLY_LINE_CAP_BYTES,
    REPLY_OVERHEAD_BYTES,
    Case,
    answer,
    reply_line_limit,
    request_output_bytes,
)
from .readings import argmax_layout, one_hot_values, squeeze_axis
from .server import encode, execute_line, hello_line, protocol_stdout, serve
from .tensors import BITS, DTYPES, Output, dtype_of, min_buffer_bytes, strides_of, view
from .validation import (
    CHECKS,
    OPERATORS,
    count_of,
    effective_rank,
    level_at_least,
    named_tensors,
    ov_output_sizes,
    parse_level,
    reject_invalid,
    validate,
)

__version__ = "1.0.0"

__all__ = [
    "BITS", "CHECKS", "DTYPES", "HELLO_LINE_MAX_BYTES", "OPERATORS", "PROTOCOL_VERSION",
    "REPLY_LINE_CAP_BYTES", "REPLY_OVERHEAD_BYTES", "Case", "InvalidArgument", "Output",
    "ProtocolViolation", "Unsupported", "answer", "argmax_layout", "count_of", "dtype_of",
    "effective_rank", "encode", "execute_line", "hello_line", "level_at_least", "log",
    "min_buffer_bytes", "named_tensors", "one_hot_values", "ov_output_sizes", "parse_level",
    "protocol_stdout", "reject_invalid", "reply_line_limit", "request_output_bytes", "serve",
    "squeeze_axis", "strides_of", "validate", "view",
]
