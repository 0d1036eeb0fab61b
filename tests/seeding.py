"""Seeds for the hands a test deals, derived from the test's name.

The service draws every hand's seed from the operating system's random source. A test that relied
on that would pass or fail with the luck of the deal, so every test replaces the draw with a
stream of seeds that the test's node id fixes (``tests/conftest.py``). A Celery worker that a
test starts is another process: ``tests.seeded_celery`` installs the same kind of stream there,
from the ``ACADEMIE_TEST_SEED_BASE`` the test exports.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator

SEED_BASE_ENV = "ACADEMIE_TEST_SEED_BASE"


def seed_stream(base: str) -> Callable[[], str]:
    """A ``new_seed`` replacement: the n-th call gives sha256(base ":" n), 64 lowercase hex."""
    counter: Iterator[int] = itertools.count()

    def new_seed() -> str:
        return hashlib.sha256(f"{base}:{next(counter)}".encode()).hexdigest()

    return new_seed


def install(base: str, setattr_: Callable[[str, object], object]) -> None:
    """Replace the seed draws of the deal and of the seating with streams from ``base``."""
    setattr_("games.services.parties.new_seed", seed_stream(f"{base}/deal"))
    setattr_("tournaments.services.soirees.new_seed", seed_stream(f"{base}/seating"))
