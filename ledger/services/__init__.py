"""Writes to the ledger: accounts, entries, transfers, payments, buy-ins, cash-outs, reversals.

Every function is keyword-only and runs in ``transaction.atomic``: called inside the caller's
transaction (the game service posts in the same transaction as the move), it works in a
savepoint and commits or rolls back with the caller; called alone, it is its own transaction.

How an entry is written (see also migration 0002_books_triggers):
1. the accounts are locked with SELECT ... FOR UPDATE in id order, so two entries touching the
   same accounts never deadlock and each sees the balance the other left;
2. the idempotency key is looked up (after the locks, so that a concurrent retry that waited
   for them sees the first entry and returns it instead of failing on funds);
3. the postings are written, then the entry, which seals them (the database checks that they
   sum to zero, moves the balances and keeps wallets and pots at zero or more).
A concurrent writer of the same key with other accounts is caught by the unique index: its
savepoint is rolled back and it answers like a retry. ``entries_post`` writes a batch the same
way in a handful of statements (one lock, one id allocation, one insert per table). Under
REPEATABLE READ or SERIALIZABLE the caller must retry on serialization failures; the project
runs READ COMMITTED.
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
