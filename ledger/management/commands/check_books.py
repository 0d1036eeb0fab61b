"""``manage.py check_books``: do the books balance? Exit status 1 if any check fails."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ledger.audit import books_audit


class Command(BaseCommand):
    help = (
        "Check the chip ledger: the trial balance is zero, every entry balances, no wallet or "
        "pot is below zero, balances and running balances match the postings, and the "
        "database triggers that enforce this are in place."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        findings = books_audit()
        for finding in findings:
            mark = self.style.SUCCESS("ok  ") if finding.ok else self.style.ERROR("FAIL")
            self.stdout.write(f"{mark} {finding.check}: {finding.detail}")
        failed = [finding for finding in findings if not finding.ok]
        if failed:
            raise CommandError(
                f"The books are wrong: {len(failed)} of {len(findings)} checks failed."
            )
        self.stdout.write(self.style.SUCCESS(f"The books balance: {len(findings)} checks passed."))
