"""Writes to the ledger: accounts, entries, transfers, payments, buy-ins, cash-outs, reversals.

Every function is keyword-only and atomic: called inside the caller's transaction (the game
service posts in the same transaction as the move), it commits or rolls back with the caller;
called alone, it is its own transaction. A refusal (InsufficientChips, IdempotencyConflict,
BackdatedEntry, ...) writes nothing and leaves the caller's transaction usable.

How an entry is written (see migrations 0002_books_triggers and 0003_ledger_post):
1. the idempotency key's lock is taken (PostgreSQL: an advisory lock on its hash), so writers
   of one key queue up and a retry racing the first writer finds its entry once it commits;
2. the accounts are locked in id order (SELECT ... FOR NO KEY UPDATE), so two entries touching
   the same accounts never deadlock and each sees the balance the other left;
3. the key is looked up (after the locks: a concurrent retry that waited sees the first entry
   and returns it instead of failing on funds or on the unique index);
4. funds and the entry's time are checked before anything is written;
5. the postings are written, then the entry, which seals them (the database checks that they
   sum to zero, moves the balances and keeps wallets and pots at zero or more).
On PostgreSQL, an entry whose lines are known in advance (``entry_post``, ``transfer``,
``buy_in``, ``cash_out`` of an amount, ``chips_grant``) is one statement, ``ledger_post``,
without a savepoint: every check comes before the first write, so no statement fails and a
refusal is raised in Python. ``entries_post`` writes a batch in one statement,
``ledger_post_many``, also without a savepoint; when a key is already taken or a check
refuses, that statement writes nothing and the Python path (locks, lookups, inserts)
answers. The entries planned on the locked balances (``pay_what_you_have``, ``cash_out``
of everything, ``entry_reverse``) keep a savepoint: two reversals of one entry under
different keys are told apart by the unique index. SQLite runs the same steps in Python, one
writer at a time. Under REPEATABLE READ or SERIALIZABLE the caller must retry on
serialization failures; the project runs READ COMMITTED.
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
