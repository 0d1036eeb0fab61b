"""The double-entry chip ledger: accounts, journal entries and their postings.

Every chip lives in an account. A journal entry moves chips between accounts with two or more
postings whose amounts sum to zero, so the sum of all balances is always zero: the club bank's
balance is minus the chips in play.

``ledger.services`` is the one writer. On PostgreSQL the database also enforces the books, with
the CHECK constraints below and the triggers in each model's ``Meta.triggers`` (django-pgtrigger,
migration 0002):
- entries and postings are append-only (UPDATE, DELETE refused; TRUNCATE refused while the
  table holds rows);
- each posting states the balance it leaves (``balance_after``): the account's previous posting's
  plus its amount, never below zero for a wallet or a pot, never earlier than that posting;
- at commit, every entry has two or more postings that sum to zero and carry its club and time;
- an account's balance is always what its latest posting left, and its identity never changes.
The embedded SQLite default has no triggers (the CHECK constraints still hold there): its only
writer is ``ledger.services``, and ``manage.py check_books`` audits the books on both.

Write only through ``ledger.services``; read through ``ledger.selectors``.
"""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

# Every refusal is an integrity violation (Django's IntegrityError) whose message starts "ledger:".
_ERR = "USING ERRCODE = 'integrity_constraint_violation'"


def _append_only() -> list[pgtrigger.Trigger]:
    """Refuse UPDATE and DELETE of any row, and TRUNCATE of a table that holds rows (an empty
    table may be truncated: Django's flush of a fresh database does that)."""
    return [
        pgtrigger.Trigger(
            name="append_only",
            when=pgtrigger.Before,
            operation=pgtrigger.Update | pgtrigger.Delete,
            func=f"RAISE EXCEPTION 'ledger: % on % refused: entries and postings are "
            f"append-only; correct a mistake with a reversing entry', TG_OP, TG_TABLE_NAME {_ERR};",
        ),
        pgtrigger.Trigger(
            name="no_truncate",
            when=pgtrigger.Before,
            operation=pgtrigger.Truncate,
            level=pgtrigger.Statement,
            declare=[("has_rows", "boolean")],
            func=f"""
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', TG_TABLE_SCHEMA, TG_TABLE_NAME)
               INTO has_rows;
            IF has_rows THEN
                RAISE EXCEPTION 'ledger: TRUNCATE on % refused: entries and postings are '
                    'append-only', TG_TABLE_NAME {_ERR};
            END IF;
            RETURN NULL;
            """,
        ),
    ]


def _entry_balanced(entry_id: str) -> str:
    """The body of a deferred check: the entry ``entry_id`` has two or more postings, summing to
    zero, that carry its time and belong to its club."""
    return f"""
    SELECT count(*), coalesce(sum(p.amount), 0),
           count(*) FILTER (WHERE p.at IS DISTINCT FROM e.at OR
               (SELECT a.club_key FROM ledger_account a WHERE a.id = p.account_id)
               IS DISTINCT FROM e.club_key)
      INTO lines, total, strays
      FROM ledger_journalentry e LEFT JOIN ledger_posting p ON p.entry_id = e.id
     WHERE e.id = {entry_id};
    IF lines < 2 OR total <> 0 THEN
        RAISE EXCEPTION 'ledger: entry % has % posting(s) summing to %; an entry needs two or '
            'more postings that sum to zero', {entry_id}, lines, total {_ERR};
    END IF;
    IF strays > 0 THEN
        RAISE EXCEPTION 'ledger: the postings of entry % must carry its time and belong to its '
            'club', {entry_id} {_ERR};
    END IF;
    RETURN NULL;
    """


_ENTRY_CHECK_DECLARE = [("lines", "bigint"), ("total", "numeric"), ("strays", "bigint")]


class AccountKind(models.TextChoices):
    WALLET = "wallet", _("Player wallet")
    POT = "pot", _("Table pot")
    BANK = "bank", _("Club bank")


class Account(models.Model):
    """A player's wallet in a club, a table's pot, or a club's bank.

    ``club_key`` names the club as a slug ("casual" for casual play): the ledger knows no club
    model, so that tournaments and games depend on the ledger and never the other way round.
    """

    kind = models.CharField(verbose_name=_("kind"), max_length=8, choices=AccountKind.choices)
    club_key = models.SlugField(verbose_name=_("club key"), max_length=64)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="chip_accounts",
        help_text=_("The player, for a wallet; empty for pots and banks."),
    )
    ref = models.CharField(
        verbose_name=_("ref"),
        max_length=100,
        blank=True,
        help_text=_("What a pot belongs to, e.g. 'partie:12'; for a bot's wallet, its table."),
    )
    name = models.CharField(verbose_name=_("name"), max_length=200)
    # Moved by ledger.services in the transaction that writes the postings; PostgreSQL refuses
    # any balance other than the one the account's latest posting left.
    balance = models.BigIntegerField(verbose_name=_("balance"), default=0, editable=False)
    last_posted_at = models.DateTimeField(
        verbose_name=_("last posted at"), null=True, blank=True, editable=False
    )
    created_at = models.DateTimeField(verbose_name=_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("account")
        verbose_name_plural = _("accounts")
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
            # A person has one wallet per club (ref ""); a bot has one per table it sits at
            # (ref "partie:<id>"), so that two tables never share a bot's chips.
            models.UniqueConstraint(
                fields=["club_key", "owner", "ref"],
                condition=Q(kind=AccountKind.WALLET),
                name="ledger_account_one_wallet_per_player_club_and_ref",
            ),
            models.UniqueConstraint(
                fields=["club_key", "ref"],
                condition=Q(kind=AccountKind.POT),
                name="ledger_account_one_pot_per_ref",
            ),
        ]
        triggers = [
            pgtrigger.Trigger(
                name="identity_fixed",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                condition=pgtrigger.AnyChange("kind", "club_key", "owner", "ref"),
                func=f"RAISE EXCEPTION 'ledger: the kind, club, owner and ref of account % never "
                f"change', OLD.id {_ERR};",
            ),
            # Row by row, after the update: the postings are written before the balances move.
            pgtrigger.Trigger(
                name="balance_from_postings",
                when=pgtrigger.After,
                operation=pgtrigger.Update,
                condition=pgtrigger.AnyChange("balance", "last_posted_at"),
                declare=[("latest_balance", "bigint"), ("latest_at", "timestamptz")],
                func=f"""
                SELECT p.balance_after, p.at INTO latest_balance, latest_at
                  FROM ledger_posting p WHERE p.account_id = NEW.id
                 ORDER BY p.at DESC, p.id DESC LIMIT 1;
                IF NEW.balance IS DISTINCT FROM coalesce(latest_balance, 0)
                   OR NEW.last_posted_at IS DISTINCT FROM latest_at THEN
                    RAISE EXCEPTION 'ledger: account % would hold %, but its latest posting left '
                        '%: a balance changes only by posting an entry (ledger.services)',
                        NEW.id, NEW.balance, coalesce(latest_balance, 0) {_ERR};
                END IF;
                RETURN NULL;
                """,
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

    idempotency_key = models.CharField(
        verbose_name=_("idempotency key"), max_length=200, unique=True
    )
    club_key = models.SlugField(verbose_name=_("club key"), max_length=64, db_index=False)
    at = models.DateTimeField(verbose_name=_("at"))
    memo = models.TextField(verbose_name=_("memo"), blank=True)
    source = models.CharField(verbose_name=_("source"), max_length=200)
    shortfall = models.PositiveBigIntegerField(verbose_name=_("shortfall"), default=0)
    reverses = models.OneToOneField(
        "self",
        verbose_name=_("reverses"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reversed_by",
        help_text=_("The entry this one cancels; an entry is reversed at most once."),
    )

    class Meta:
        verbose_name = _("journal entry")
        verbose_name_plural = _("journal entries")
        ordering = ["-at", "-id"]
        indexes = [
            # Settlements and the admin read a club's entries over a time window.
            models.Index(fields=["club_key", "at"], name="ledger_entry_club_at_idx"),
        ]
        triggers = [
            *_append_only(),
            # An entry written without postings; checked at commit, once its postings are in.
            pgtrigger.Trigger(
                name="balanced",
                when=pgtrigger.After,
                operation=pgtrigger.Insert,
                timing=pgtrigger.Deferred,
                declare=_ENTRY_CHECK_DECLARE,
                func=_entry_balanced("NEW.id"),
            ),
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
        JournalEntry,
        verbose_name=_("entry"),
        on_delete=models.PROTECT,
        related_name="postings",
        db_index=False,
    )
    account = models.ForeignKey(
        Account,
        verbose_name=_("account"),
        on_delete=models.PROTECT,
        related_name="postings",
        db_index=False,
    )
    amount = models.BigIntegerField(verbose_name=_("amount"))
    balance_after = models.BigIntegerField(verbose_name=_("balance after"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        verbose_name = _("posting")
        verbose_name_plural = _("postings")
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
        triggers = [
            *_append_only(),
            # Each row sees the rows a bulk INSERT wrote before it, so a batch chains in order.
            pgtrigger.Trigger(
                name="running_balance",
                when=pgtrigger.Before,
                operation=pgtrigger.Insert,
                declare=[
                    ("kind", "varchar"),
                    ("previous_balance", "bigint"),
                    ("previous_at", "timestamptz"),
                ],
                func=f"""
                SELECT a.kind INTO kind FROM ledger_account a WHERE a.id = NEW.account_id;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: posting to account %: no such account',
                        NEW.account_id {_ERR};
                END IF;
                SELECT p.balance_after, p.at INTO previous_balance, previous_at
                  FROM ledger_posting p WHERE p.account_id = NEW.account_id
                 ORDER BY p.at DESC, p.id DESC LIMIT 1;
                IF previous_at > NEW.at THEN
                    RAISE EXCEPTION 'ledger: posting at % to account % is earlier than its last '
                        'posting (%)', NEW.at, NEW.account_id, previous_at {_ERR};
                END IF;
                IF NEW.balance_after IS DISTINCT FROM coalesce(previous_balance, 0) + NEW.amount
                THEN
                    RAISE EXCEPTION 'ledger: posting to account % states balance_after %, but '
                        'its previous posting left %', NEW.account_id, NEW.balance_after,
                        coalesce(previous_balance, 0) {_ERR};
                END IF;
                IF NEW.balance_after < 0 AND kind <> 'bank' THEN
                    RAISE EXCEPTION 'ledger: posting to account % would leave it below zero (%)',
                        NEW.account_id, NEW.balance_after {_ERR};
                END IF;
                RETURN NEW;
                """,
            ),
            # A posting added to an entry, even one written earlier, must keep it balanced.
            pgtrigger.Trigger(
                name="entry_balanced",
                when=pgtrigger.After,
                operation=pgtrigger.Insert,
                timing=pgtrigger.Deferred,
                declare=_ENTRY_CHECK_DECLARE,
                func=_entry_balanced("NEW.entry_id"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.amount:+d} {self.account} (entry #{self.entry_id})"
