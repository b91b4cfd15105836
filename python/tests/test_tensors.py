"""Tensors through strides: buffer sizes, views, and output buffers that keep the poison."""

import unittest

import numpy as np

import opconform_protocol as kit
from helpers import desc


class BufferSizes(unittest.TestCase):
    def test_min_buffer_bytes_matches_the_dml_examples(self):
        # The DML_BUFFER_TENSOR_DESC examples (the Rust side checks the same numbers).
        self.assertEqual(kit.min_buffer_bytes(desc("FLOAT16", [1, 1, 1, 3])), 8)
        self.assertEqual(kit.min_buffer_bytes(desc("FLOAT32", [4, 3], strides=[0, 1])), 12)
        self.assertEqual(kit.min_buffer_bytes(desc("UINT8", [2, 3], strides=[4, 1])), 8)

    def test_packed_strides_are_row_major(self):
        self.assertEqual(kit.strides_of(desc("UINT8", [2, 3, 4])), [12, 4, 1])
        self.assertEqual(kit.strides_of(desc("UINT8", [2, 3], strides=[1, 2])), [1, 2])


class Views(unittest.TestCase):
    def test_a_view_follows_the_strides(self):
        buffer = np.arange(8, dtype="<u4").tobytes()
        # Sizes [2, 3], strides [4, 1]: rows start at elements 0 and 4.
        values = kit.view(desc("UINT32", [2, 3], strides=[4, 1], total=32), buffer)
        self.assertEqual(values.tolist(), [[0, 1, 2], [4, 5, 6]])
        # Broadcast: stride 0 repeats the row.
        values = kit.view(desc("UINT32", [2, 3], strides=[0, 1], total=12), buffer[:12])
        self.assertEqual(values.tolist(), [[0, 1, 2], [0, 1, 2]])

    def test_a_buffer_too_short_for_the_strides_is_a_protocol_violation(self):
        with self.assertRaises(kit.ProtocolViolation):
            kit.view(desc("UINT32", [2, 3], strides=[4, 1], total=16), bytes(16))

    def test_bits_views_copy_float_bits_exactly(self):
        nan = np.array([np.float32("nan")]).view("<u4")[0] | 1  # a NaN with a payload
        buffer = np.array([nan], dtype="<u4").tobytes()
        bits = kit.view(desc("FLOAT32", [1]), buffer, bits=True)
        self.assertEqual(int(bits[0]), int(nan))


class Outputs(unittest.TestCase):
    def test_writes_go_through_the_strides_and_leave_padding_alone(self):
        output = kit.Output("OutputTensor", desc("UINT8", [2, 2], strides=[3, 1], total=8),
                            bytes([0xAB]) * 8)
        output.write(np.array([[1, 2], [3, 4]]))
        self.assertEqual(bytes(output.data), bytes([1, 2, 0xAB, 3, 4, 0xAB, 0xAB, 0xAB]))

    def test_unwrite_last_restores_the_poison(self):
        output = kit.Output("OutputTensor", desc("UINT8", [4]), bytes([0xAB]) * 4)
        self.assertFalse(output.unwrite_last())
        output.write(np.array([1, 2, 3, 4]))
        self.assertTrue(output.unwrite_last())
        self.assertEqual(bytes(output.data), bytes([1, 2, 3, 0xAB]))


if __name__ == "__main__":
    unittest.main()
