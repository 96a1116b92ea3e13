"""Measurement: timers with injected clocks, statistics, and the machine probes."""
