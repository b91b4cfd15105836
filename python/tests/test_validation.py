"""The descriptor validator: rule ids at the requested level."""

import unittest

import opconform_protocol as kit
from helpers import argmax_operator, desc


def rules(operator, level):
    return [rule for rule, _ in kit.validate(operator, level)]


class Levels(unittest.TestCase):
    def test_short_and_long_names(self):
        self.assertEqual(kit.parse_level("4_1"), ("dml", 0x4100))
        self.assertEqual(kit.parse_level("DML_FEATURE_LEVEL_2_0"), ("dml", 0x2000))
        self.assertEqual(kit.parse_level("opset16"), ("opset", 16))
        self.assertTrue(kit.level_at_least("4_1", ("dml", 0x3000)))
        self.assertFalse(kit.level_at_least("opset1", ("dml", 0x2000)))


class Validate(unittest.TestCase):
    def test_a_valid_argmax_breaks_no_rule(self):
        self.assertEqual(rules(argmax_operator(), "3_0"), [])

    def test_argmax_is_not_available_before_3_0(self):
        self.assertEqual(rules(argmax_operator(), "2_1"), ["ARGMAX.AVAILABILITY"])

    def test_repeated_axes_and_wrong_output_sizes(self):
        operator = argmax_operator(axes=(1,))
        operator["axes"] = [1, 1]
        self.assertIn("ARGMAX.AXES_DISTINCT", rules(operator, "4_1"))
        operator = argmax_operator(axes=(1,))
        operator["output"] = desc("UINT32", [2, 3])
        self.assertEqual(rules(operator, "4_1"), ["ARGMAX.OUTPUT_SIZES"])

    def test_buffer_tensor_rules_apply_to_dml_operators(self):
        operator = argmax_operator()
        operator["input"] = desc("FLOAT32", [2, 3], total=20)
        self.assertEqual(rules(operator, "4_1"), ["TENSOR.TOTAL_SIZE"])

    def test_one_hot_1_output_shape(self):
        operator = {
            "operator": "OneHot-1", "indices": desc("INT32", [4]), "depth": desc("INT32", []),
            "depth_value": 3, "on_value": desc("INT32", []), "off_value": desc("INT32", []),
            "output": desc("INT32", [4, 3]), "axis": -1,
        }
        self.assertEqual(rules(operator, "opset1"), [])
        operator["output"]["sizes"] = [3, 4]
        self.assertEqual(rules(operator, "opset1"), ["ONEHOT1.OUTPUT_SHAPE"])


if __name__ == "__main__":
    unittest.main()
