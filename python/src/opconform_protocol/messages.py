"""Protocol v1 messages: a decoded execute request (Case), the reply to it, and the caps
opconform puts on reply lines (docs/backend-protocol.md, sections 2 and 4)."""

import base64
import traceback

import numpy as np

from .errors import InvalidArgument, ProtocolViolation, Unsupported
from .log import log
from .tensors import Output, view
from .validation import OPERATORS

PROTOCOL_VERSION = 1

# The longest hello reply opconform reads, without its newline.
HELLO_LINE_MAX_BYTES = 65536

# The most an execute reply may hold beyond the base64 of its output buffers.
REPLY_OVERHEAD_BYTES = 65536

# No reply line is longer than this (room for a 1 GiB output buffer).
REPLY_LINE_CAP_BYTES = 2 << 30


def reply_line_limit(output_bytes):
    """The longest reply line opconform accepts for an execute request whose outputs'
    total_tensor_size_in_bytes sum to `output_bytes`: 4 * ceil(S / 3) + 64 KiB, at most
    2 GiB. A longer line is a crash."""
    return min(4 * -(-output_bytes // 3) + REPLY_OVERHEAD_BYTES, REPLY_LINE_CAP_BYTES)


def request_output_bytes(request):
    """The sum of an execute request's outputs' total_tensor_size_in_bytes (0 when absent)."""
    total = 0
    for payload in request.get("outputs") or []:
        try:
            total += int(payload["desc"]["total_tensor_size_in_bytes"])
        except (KeyError, TypeError, ValueError):
            pass
    return total


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
        """The description of input `index`."""
        return self.inputs[index][1]


def answer(request, execute):
    """The reply to one execute request (a dict to send as one JSON line)."""
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
