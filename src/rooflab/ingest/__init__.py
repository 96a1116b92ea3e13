"""Ingest: kernel lists from files and profilers (ncu, torch profiler, rocprof) -> Kernels."""
