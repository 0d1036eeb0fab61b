"""How the pages name a person: his name as the club knows it (first and last name, given at
sign-up), else his username; nothing for nobody."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def name_of(user: Any) -> str:
    if user is None:
        return ""
    return str(user.get_full_name() or user.get_username())
