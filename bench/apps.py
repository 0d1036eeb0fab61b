from __future__ import annotations

import os
import random

from django.apps import AppConfig


def seed_deals(seed: str) -> None:
    """Make the service deal from a seeded stream instead of the system's random source, so
    that a run of the benchmark deals the same hands as the last one (in each process)."""
    from games.services import parties

    rng = random.Random(seed)
    parties.new_seed = lambda: rng.randbytes(32).hex()


class BenchConfig(AppConfig):
    name = "bench"
    label = "bench"

    def ready(self) -> None:
        # Each server worker deals from its own stream: two workers on one stream would deal
        # the same seeds, whose commitments then repeat across hands.
        if os.environ.get("BENCH_SEED"):
            seed_deals(f"{os.environ['BENCH_SEED']}:{os.getpid()}")
