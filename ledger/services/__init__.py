"""Writes to the ledger: accounts, entries, transfers, payments, buy-ins, cash-outs, reversals.

Every function is keyword-only and atomic: called inside the caller's transaction (the game
service posts in the same transaction as the move), it commits or rolls back with the caller;
called alone, it is its own transaction. A refusal (InsufficientChips, IdempotencyConflict,
BackdatedEntry, ...) writes nothing and leaves the caller's transaction usable.

One write path (ledger/services/writer.py), on the ORM, in ``transaction.atomic()``:
1. the accounts are locked (``select_for_update(no_key=True)``) in id order, so two entries
   touching the same accounts never deadlock and each sees the balance the other left;
2. the idempotency keys are looked up (after the locks: a retry that waited for the first writer
   finds its entry): a taken key returns its entry and posts nothing, or raises
   IdempotencyConflict if that entry moved other chips;
3. each new entry is planned on the locked balances, and its funds and time are checked before
   anything is written;
4. the entries, then their postings, are written with ``bulk_create``, and each account's balance
   moves once by an F() expression.
On PostgreSQL the database checks the result again (ledger/models.py: append-only tables,
running balances, balanced entries at commit, CHECK constraints). Under REPEATABLE READ or
SERIALIZABLE the caller must retry on serialization failures; the project runs READ COMMITTED.
"""

from ledger.services.accounts import bank_get_or_create, pot_get_or_create, wallet_get_or_create
from ledger.services.entries import (
    buy_in,
    cash_out,
    chips_grant,
    entries_post,
    entry_post,
    entry_reverse,
    pay_what_you_have,
    transfer,
)
from ledger.services.writer import MAX_AMOUNT, EntryRequest

CASUAL_CLUB = "casual"

__all__ = [
    "CASUAL_CLUB",
    "MAX_AMOUNT",
    "EntryRequest",
    "bank_get_or_create",
    "buy_in",
    "cash_out",
    "chips_grant",
    "entries_post",
    "entry_post",
    "entry_reverse",
    "pay_what_you_have",
    "pot_get_or_create",
    "transfer",
    "wallet_get_or_create",
]
