"""The `rooflab` command line: the only layer that prints or exits."""
