"""A PDF's text for the tests, by pypdf (pure Python: no poppler on a machine with only Python)."""

from __future__ import annotations

import io

from pypdf import PdfReader


def pdf_pages_text(content: bytes) -> str:
    """Each page's text in layout mode (its columns kept in place), pages joined by a form
    feed as pdftotext joins them."""
    reader = PdfReader(io.BytesIO(content))
    return "\f".join(page.extract_text(extraction_mode="layout") for page in reader.pages)
