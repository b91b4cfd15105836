"""The protocol loop: handshake, one reply per execute request, shutdown."""

import json
import os
import sys

from .messages import (
    HELLO_LINE_MAX_BYTES,
    PROTOCOL_VERSION,
    answer,
    reply_line_limit,
    request_output_bytes,
)
from .log import log


def protocol_stdout():
    """Reserves the real stdout for protocol lines and sends everything else (print, C
    libraries writing to fd 1) to stderr. Call it before importing chatty libraries."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8")


def encode(message):
    """One protocol line (without its newline): compact JSON."""
    return json.dumps(message, separators=(",", ":"))


def hello_line(hello):
    """The hello reply line; ValueError when it is over the 64 KiB opconform reads."""
    line = encode(dict({"type": "hello", "protocol": PROTOCOL_VERSION}, **hello))
    if len(line.encode("utf-8")) > HELLO_LINE_MAX_BYTES:
        raise ValueError("the hello reply is %d bytes; opconform reads at most %d"
                         % (len(line.encode("utf-8")), HELLO_LINE_MAX_BYTES))
    return line


def execute_line(request, execute):
    """The reply line to one execute request. A result over the line cap opconform applies
    (reply_line_limit) would be read as a crash; it is answered as an `internal` error."""
    reply = answer(request, execute)
    line = encode(reply)
    limit = reply_line_limit(request_output_bytes(request))
    if len(line) > limit:
        line = encode({"type": "error", "id": request.get("id"), "kind": "internal",
                       "message": "the reply would be %d bytes, over the %d-byte line cap"
                       % (len(line), limit)})
    return line


def serve(hello, execute, out=None, stdin=None):
    """Runs the protocol v1 loop on stdin until shutdown or end of input.

    hello: the hello reply fields (name, version, device, claims, operators).
    execute(case) -> None: validates, runs and writes case.outputs, or raises Unsupported,
    InvalidArgument or any other exception (answered as internal).
    out, stdin: the protocol streams (default: protocol_stdout() and sys.stdin).
    """
    out = out or protocol_stdout()
    stdin = stdin or sys.stdin

    def send(line):
        out.write(line + "\n")
        out.flush()

    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        kind = request.get("type")
        if kind == "hello":
            offered = request.get("protocol", 0)
            if offered < PROTOCOL_VERSION:
                send(encode({"type": "error", "kind": "unsupported",
                             "message": "this backend speaks protocol %d only"
                             % PROTOCOL_VERSION}))
                return
            send(hello_line(hello))
        elif kind == "execute":
            send(execute_line(request, execute))
        elif kind == "shutdown":
            return
        else:
            log("ignoring a %r message" % kind)
