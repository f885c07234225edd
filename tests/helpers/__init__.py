"""What the test suite and the benchmarks share: builders, sign-in, instances, workers, the
browser and throw-away databases. Never imports a test module."""
