"""The errors a backend raises from execute(): each becomes one protocol error reply."""

class Unsupported(Exception):
    """The backend lacks a type, rank or feature the case needs (`unsupported`)."""


class InvalidArgument(Exception):
    """The descriptor is invalid at the requested level (`invalid_argument`)."""

    def __init__(self, rules, message):
        super().__init__(message)
        self.rules = list(rules)
        self.message = message


class ProtocolViolation(Exception):
    """The request itself is malformed (answered as `internal`)."""
