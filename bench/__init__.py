"""The benchmarks (bench/README.md). A package so that bench.settings and bench.urls import."""
