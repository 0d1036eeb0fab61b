"""The double-entry chip ledger: accounts, journal entries and their postings.

Every chip lives in an account. A journal entry moves chips between accounts with two or more
postings whose amounts sum to zero, so the sum of all balances is always zero: the club bank's
balance is minus the chips in play.

The database enforces the books, not only Python (migration 0002_books_triggers):
- entries and postings are append-only (UPDATE, DELETE, TRUNCATE refused);
- postings are written first and their entry last; inserting the entry seals it, and is refused
  unless its postings are two or more, sum to zero and share its time and club (PostgreSQL checks
  the sum again at commit with a deferred constraint trigger);
- each posting moves its account's ``balance`` (a trigger, never Python) and must state the
  balance it leaves (``balance_after``); the CHECK below keeps wallets and pots at zero or more,
  whatever the number of concurrent writers, since the balance update locks the account row;
- an account's balance and identity cannot be edited by hand.

Write only through ``ledger.services``; read through ``ledger.selectors``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class AccountKind(models.TextChoices):
    WALLET = "wallet", "Player wallet"
    POT = "pot", "Table pot"
    BANK = "bank", "Club bank"


class Account(models.Model):
    """A player's wallet in a club, a table's pot, or a club's bank.

    ``club_key`` names the club as a slug ("casual" for casual play): the ledger knows no club
    model, so that tournaments and games depend on the ledger and never the other way round.
    """

    kind = models.CharField(max_length=8, choices=AccountKind.choices)
    club_key = models.SlugField(max_length=64)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="chip_accounts",
        help_text="The player, for a wallet; empty for pots and banks.",
    )
    ref = models.CharField(
        max_length=100, blank=True, help_text="What a pot belongs to, e.g. 'partie:12'."
    )
    name = models.CharField(max_length=200)
    # Kept by the posting trigger in the same statement that writes the posting; Python never
    # writes it (the account trigger refuses), so it cannot drift from the postings.
    balance = models.BigIntegerField(default=0, editable=False)
    last_posted_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["club_key", "kind", "name", "id"]
        permissions = [("grant_chips", "Can grant or withdraw a player's chips")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=AccountKind.values), name="ledger_account_kind_valid"
            ),
            # RULES.md §3: chips never go below zero. Only the bank, the other side of every
            # buy-in, holds a negative balance (minus the chips in play).
            models.CheckConstraint(
                condition=Q(kind=AccountKind.BANK) | Q(balance__gte=0),
                name="ledger_account_balance_not_negative",
            ),
            models.CheckConstraint(
                condition=(Q(kind=AccountKind.WALLET) & Q(owner__isnull=False))
                | (~Q(kind=AccountKind.WALLET) & Q(owner__isnull=True)),
                name="ledger_account_wallet_has_owner",
            ),
            models.CheckConstraint(
                condition=~Q(kind=AccountKind.POT) | ~Q(ref=""), name="ledger_account_pot_has_ref"
            ),
            models.UniqueConstraint(
                fields=["club_key"],
                condition=Q(kind=AccountKind.BANK),
                name="ledger_account_one_bank_per_club",
            ),
            models.UniqueConstraint(
                fields=["club_key", "owner"],
                condition=Q(kind=AccountKind.WALLET),
                name="ledger_account_one_wallet_per_player_and_club",
            ),
            models.UniqueConstraint(
                fields=["club_key", "ref"],
                condition=Q(kind=AccountKind.POT),
                name="ledger_account_one_pot_per_ref",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def may_go_negative(self) -> bool:
        return self.kind == AccountKind.BANK


class JournalEntry(models.Model):
    """One movement of chips: two or more postings summing to zero, never changed afterwards.

    ``idempotency_key`` is unique in the database: posting the same key again returns this
    entry (for game chips the key is the hand id and the seq of the first payment event the
    entry nets, so a replay never posts twice). ``source`` says what caused it, e.g.
    "hand:41/events:7-11"; ``shortfall`` is what a payer owed
    but did not hold (RULES.md §3), also written in the memo.
    """

    idempotency_key = models.CharField(max_length=200, unique=True)
    club_key = models.SlugField(max_length=64, db_index=False)
    at = models.DateTimeField()
    memo = models.TextField(blank=True)
    source = models.CharField(max_length=200)
    shortfall = models.PositiveBigIntegerField(default=0)
    reverses = models.OneToOneField(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reversed_by",
        help_text="The entry this one cancels; an entry is reversed at most once.",
    )

    class Meta:
        verbose_name_plural = "journal entries"
        ordering = ["-at", "-id"]
        indexes = [
            # Settlements and the admin read a club's entries over a time window.
            models.Index(fields=["club_key", "at"], name="ledger_entry_club_at_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.memo}"


class Posting(models.Model):
    """One line of an entry: ``amount`` chips into (positive) or out of (negative) an account.

    ``balance_after`` is the account's balance once this posting is applied (the statement's
    running balance); ``at`` repeats the entry's time so that "balance as of" is one index
    lookup: the account's last posting at or before that time.
    """

    # No single-column indexes: the unique (entry, account) and the (account, at, id) index below
    # serve both foreign keys, and every index costs each insert.
    entry = models.ForeignKey(
        JournalEntry, on_delete=models.PROTECT, related_name="postings", db_index=False
    )
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="postings", db_index=False
    )
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField()
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="ledger_posting_amount_not_zero"),
            # One line per account and entry; also the index that finds an entry's postings.
            models.UniqueConstraint(
                fields=["entry", "account"], name="ledger_posting_one_line_per_account"
            ),
        ]
        indexes = [
            # Statements and "balance as of" walk one account's postings in time order.
            models.Index(fields=["account", "at", "id"], name="ledger_post_account_at_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.amount:+d} {self.account} (entry #{self.entry_id})"
