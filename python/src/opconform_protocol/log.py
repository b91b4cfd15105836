"""Logging to stderr (stdout carries protocol lines only)."""

import sys


def log(message):
    """Writes one line to stderr (opconform keeps its last 2048 bytes for crash reports)."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
