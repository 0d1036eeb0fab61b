"""The domain errors: one base class (config.errors.DomainError) whose status and code the one
exception handler (config.exceptions) answers, for every app's errors alike; config/ imports no
app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from config.errors import DomainError
from config.exceptions import exception_handler
from games import errors as game_errors
from ledger import exceptions as ledger_errors
from tournaments import errors as tournament_errors

ROOT = Path(__file__).resolve().parent.parent
APPS = ("games", "ledger", "tournaments", "frontend")
#: The entry points, which wire the apps together.
ENTRY_POINTS = {"urls.py", "asgi.py"}


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


@pytest.mark.parametrize(("error", "status", "answer"), [
    (game_errors.StaleSequence("the hand is at seq 4, not 3"), 409,
     {"error": "stale_sequence", "detail": "the hand is at seq 4, not 3"}),
    (game_errors.IllegalMoveError("follow suit", rule="4.2"), 400,
     {"error": "illegal_move", "rule": "4.2", "detail": "follow suit"}),
    (game_errors.NotSeated("you have no seat at this table"), 403,
     {"error": "not_seated", "detail": "you have no seat at this table"}),
    (game_errors.GameError("hand 2 is still being played", code="hand_in_progress"), 400,
     {"error": "hand_in_progress", "detail": "hand 2 is still being played"}),
    (ledger_errors.InsufficientChips("not enough chips", account_id=1, balance=0, needed=5),
     409, {"error": "insufficient_chips", "detail": "not enough chips"}),
    (ledger_errors.UnbalancedEntry("postings sum to 3"), 400,
     {"error": "unbalanced_entry", "detail": "postings sum to 3"}),
    (tournament_errors.NotOrganiser("only an organiser may do this"), 403,
     {"error": "not_organiser", "detail": "only an organiser may do this"}),
    (tournament_errors.SoireeState("the soirée is already open"), 409,
     {"error": "soiree_state", "detail": "the soirée is already open"}),
    (tournament_errors.SoireeError("a soirée must end after it starts"), 400,
     {"error": "soiree_error", "detail": "a soirée must end after it starts"}),
])
def test_each_apps_error_is_answered_with_its_status_and_code(
        error: DomainError, status: int, answer: dict[str, str]) -> None:
    response = exception_handler(error, {})
    assert response is not None
    assert response.status_code == status
    assert response.data == answer


def test_every_apps_errors_derive_from_the_one_base_with_a_code_and_a_client_status() -> None:
    for base in (game_errors.GameError, ledger_errors.LedgerError,
                 tournament_errors.TournamentError):
        assert issubclass(base, DomainError)
    errors = [e for e in _subclasses(DomainError) if e.__module__.split(".")[0] in APPS]
    assert len(errors) >= 20
    for error in errors:
        assert 400 <= error.status < 500, error
        assert error.code and error.code.isidentifier() and error.code.islower(), error
    named = [e.code for e in errors]
    assert len(named) == len(set(named)), sorted(named)


def test_an_error_the_handler_does_not_know_is_left_to_django() -> None:
    assert exception_handler(RuntimeError("a bug"), {}) is None


def test_config_imports_no_app_outside_its_entry_points() -> None:
    found = []
    for path in sorted((ROOT / "config").rglob("*.py")):
        if path.name in ENTRY_POINTS and path.parent.name == "config":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(ROOT)}: {name}" for name in names
                      if name.split(".")[0] in APPS]
    assert found == []
