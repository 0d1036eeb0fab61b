"""A trivial DRF endpoint that inserts one row: the ceiling of bench/api_bench.py.

Installed only when ACADEMIE_BENCH_TRIVIAL is set (config/settings/base.py, config/urls.py).
"""
