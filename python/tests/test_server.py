"""The protocol loop, in process and as the backends run it (a child process)."""

import io
import json
import os
import subprocess
import sys
import unittest

import numpy as np

import opconform_protocol as kit
from helpers import argmax_operator, execute_request

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HELLO = {"name": "test", "version": "1", "device": "cpu", "claims": ["4_1"],
         "operators": ["DML_ARGMAX"]}


def run_loop(requests, execute=lambda case: None):
    stdin = io.StringIO("".join(json.dumps(r) + "\n" for r in requests))
    out = io.StringIO()
    kit.serve(HELLO, execute, out=out, stdin=stdin)
    return [json.loads(line) for line in out.getvalue().splitlines()]


class Loop(unittest.TestCase):
    def test_hello_execute_shutdown(self):
        inp = np.array([[1, 5, 2], [7, 0, 7]], dtype="<f4").tobytes()
        replies = run_loop([
            {"type": "hello", "protocol": 1},
            execute_request(argmax_operator(), [inp], rid=1),
            {"type": "shutdown"},
            execute_request(argmax_operator(), [inp], rid=2),  # after shutdown: unanswered
        ])
        self.assertEqual([r["type"] for r in replies], ["hello", "result"])
        self.assertEqual(replies[0]["protocol"], 1)
        self.assertEqual(replies[0]["operators"], ["DML_ARGMAX"])
        self.assertEqual(replies[1]["id"], 1)

    def test_an_older_protocol_is_refused(self):
        replies = run_loop([{"type": "hello", "protocol": 0}, {"type": "shutdown"}])
        self.assertEqual(replies[0]["type"], "error")
        self.assertEqual(replies[0]["kind"], "unsupported")

    def test_blank_lines_and_unknown_messages_get_no_reply(self):
        stdin = io.StringIO('\n{"type": "ping"}\n{"type": "shutdown"}\n')
        out = io.StringIO()
        kit.serve(HELLO, lambda case: None, out=out, stdin=stdin)
        self.assertEqual(out.getvalue(), "")


class Backends(unittest.TestCase):
    def test_the_broken_backend_runs_on_the_installed_package(self):
        # tools/broken_backend.py imports opconform_protocol; run from another folder so
        # only the installed package (or the checkout's python/src) can satisfy the import.
        requests = '{"type":"hello","protocol":1}\n{"type":"shutdown"}\n'
        done = subprocess.run(
            [sys.executable, os.path.join(REPO, "tools", "broken_backend.py")],
            input=requests, capture_output=True, text=True, timeout=60, cwd="/",
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        hello = json.loads(done.stdout.splitlines()[0])
        self.assertEqual(hello["type"], "hello")
        self.assertEqual(hello["protocol"], kit.PROTOCOL_VERSION)


if __name__ == "__main__":
    unittest.main()
