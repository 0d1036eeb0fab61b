"""The Celery app for the workers tests start (``celery -A tests.seeded_celery``): the
project's app, with the hand seeds drawn from the starting test's name (``tests.seeding``)."""

from __future__ import annotations

import importlib
import os

from billiard.process import current_process
from celery.signals import worker_init, worker_process_init

from config.celery import app
from tests.seeding import SEED_BASE_ENV, install

__all__ = ["app"]


def _install(part: str, *, setup: bool) -> None:
    base = os.environ.get(SEED_BASE_ENV)
    if not base:
        raise RuntimeError(f"{SEED_BASE_ENV} is not set: a test worker would deal unseeded hands")
    if setup:  # the main process; a pool process is forked from it, Django set up already
        import django

        django.setup()

    def setattr_(target: str, value: object) -> None:
        module, name = target.rsplit(".", 1)
        setattr(importlib.import_module(module), name, value)

    install(f"{base}/{part}", setattr_)


@worker_init.connect  # type: ignore[untyped-decorator]
def _seeded_worker(**_: object) -> None:
    _install("main", setup=True)


@worker_process_init.connect  # type: ignore[untyped-decorator]
def _seeded_pool_process(**_: object) -> None:
    # Each process of a prefork pool draws its own stream, so that two never deal one seed.
    _install(f"pool-{getattr(current_process(), 'index', 0)}", setup=False)
