"""Execute requests and their replies, and the caps on reply lines."""

import base64
import unittest

import numpy as np

import opconform_protocol as kit
from helpers import argmax_operator, execute_request

INPUT = np.array([[1, 5, 2], [7, 0, 7]], dtype="<f4").tobytes()


def argmax_rows(case):
    kit.reject_invalid(case)
    case.outputs[0].write(np.argmax(case.input(0), axis=1).reshape(2, 1))


class Answers(unittest.TestCase):
    def test_a_result_carries_every_output_buffer(self):
        reply = kit.answer(execute_request(argmax_operator(), [INPUT]), argmax_rows)
        self.assertEqual(reply["type"], "result")
        self.assertEqual(reply["id"], 7)
        data = base64.b64decode(reply["outputs"][0]["data"])
        self.assertEqual(np.frombuffer(data, "<u4").tolist(), [1, 0])

    def test_an_invalid_descriptor_is_answered_with_its_rules(self):
        operator = argmax_operator()
        operator["axes"] = [1, 1]
        reply = kit.answer(execute_request(operator, [INPUT]), argmax_rows)
        self.assertEqual(reply["kind"], "invalid_argument")
        self.assertIn("ARGMAX.AXES_DISTINCT", reply["rules"])

    def test_unsupported_and_internal(self):
        def refuse(case):
            raise kit.Unsupported("no FLOAT32 here")

        def crash(case):
            raise KeyError("oops")

        request = execute_request(argmax_operator(), [INPUT])
        self.assertEqual(kit.answer(request, refuse)["kind"], "unsupported")
        reply = kit.answer(request, crash)
        self.assertEqual(reply["kind"], "internal")
        self.assertIn("KeyError", reply["message"])

    def test_a_malformed_request_is_internal(self):
        request = execute_request(argmax_operator(), [INPUT])
        request["inputs"][0]["name"] = "Input"
        reply = kit.answer(request, argmax_rows)
        self.assertEqual(reply["kind"], "internal")
        self.assertIn("ProtocolViolation", reply["message"])
        request = execute_request(argmax_operator(), [INPUT[:20]])
        self.assertEqual(kit.answer(request, argmax_rows)["kind"], "internal")


class Caps(unittest.TestCase):
    def test_the_reply_line_limit_is_the_documented_formula(self):
        # 4 * ceil(S / 3) + 65536, at most 2 GiB (docs/backend-protocol.md, section 2).
        self.assertEqual(kit.reply_line_limit(0), 65536)
        self.assertEqual(kit.reply_line_limit(3), 4 + 65536)
        self.assertEqual(kit.reply_line_limit(4), 8 + 65536)
        self.assertEqual(kit.reply_line_limit(1 << 40), 2 << 30)
        request = execute_request(argmax_operator(), [INPUT])
        self.assertEqual(kit.request_output_bytes(request), 8)

    def test_a_reply_over_the_cap_becomes_an_internal_error(self):
        def chatty(case):
            raise kit.Unsupported("x" * 70000)

        line = kit.execute_line(execute_request(argmax_operator(), [INPUT]), chatty)
        self.assertLessEqual(len(line), kit.reply_line_limit(8))
        self.assertIn('"kind":"internal"', line)
        self.assertIn("line cap", line)

    def test_a_hello_over_64_kib_is_refused(self):
        with self.assertRaises(ValueError):
            kit.hello_line({"name": "n" * 70000})
        self.assertIn('"protocol":1', kit.hello_line({"name": "mine"}))


if __name__ == "__main__":
    unittest.main()
