"""Reference kernels (the zoo) and PyTorch op counting; see rooflab.bench.zoo.run_zoo."""
