"""Model instances built from rows read or written by plain SQL, for the apps' hot paths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import models
from django.db.models.base import ModelState

M = TypeVar("M", bound=models.Model)


def built(model: type[M], alias: str, names: Sequence[str], values: Sequence[Any]) -> M:
    """``model.from_db(alias, names, values)`` without ``Model.__init__``: the values set as
    the instance's attributes, its state as read from ``alias``. An attribute not given is
    deferred, read if asked, as ``from_db`` leaves it. ``__init__`` sets each field through
    its descriptor and sends ``pre_init`` and ``post_init``, which nothing in this project
    listens to (tests/games/test_store_statements.py checks both). Profiled, building the rows
    of a hand's read was a twentieth of a worker's CPU under the benchmark's moves, and
    building a ledger batch's entries a twelfth of the CPU of a move that ends a hand
    (bench/api_bench.md, eleventh round)."""
    instance = model.__new__(model)
    instance.__dict__.update(zip(names, values, strict=True))
    state = ModelState()
    state.adding = False
    state.db = alias
    instance._state = state
    return instance
