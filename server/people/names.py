"""The one profile every name goes through (accounts, bots, guests), and look-alikes.

Names follow PRECIS's username profile (RFC 8265, ``UsernameCasePreserved``, by the
``precis-i18n`` package): width-mapped and NFC-normalized, with control characters, bidi
overrides, zero-width joiners and other invisible or unassigned code points refused. A guest's
name may have spaces: each space-separated part is a username (RFC 8265 section 3.5), joined
by single spaces.

A name may still pass for another one letter by letter: Cyrillic "а" for Latin "a". Its
*look-alike* (``lookalike``) replaces each character that Unicode's confusables table (TR39,
as the maintained ``confusable-homoglyphs`` package ships it) says looks like an ASCII one by
that ASCII character; if the result is another person's account name, or a bot's or an
admin's, the guest is shown as ``<name> (guest)`` (``server.people.identity``) and an account or bot
may not take it.
"""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs import confusables
from precis_i18n import get_profile

_PROFILE = get_profile("UsernameCasePreserved")


class BadName(ValueError):
    """A name the profile refuses; the message says which character and why."""


def enforce(name: str) -> str:
    """``name`` as the profile has it, or ``BadName``."""
    parts = name.split(" ")
    if not any(parts):
        raise BadName("a name needs at least one visible character")
    out = []
    for part in parts:
        if not part:
            continue
        try:
            out.append(_PROFILE.enforce(part))
        except UnicodeError as exc:
            reason = getattr(exc, "reason", str(exc))
            raise BadName(f"that name has a character names may not have ({reason})") from None
    return " ".join(out)


def guest(name: str) -> str | None:
    """A guest's ``name`` as shown: invisible characters (controls, format characters such
    as zero-width joiners and bidi overrides) dropped, then the profile's; None if nothing
    the profile takes is left (the guest is then given a name)."""
    visible = "".join(c for c in name if unicodedata.category(c) not in _INVISIBLE)
    try:
        return enforce(" ".join(visible.split()))
    except BadName:
        return None


_INVISIBLE = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


@functools.cache
def _to_ascii() -> dict[str, str]:
    """Each non-ASCII character that the confusables table links to an ASCII letter or
    digit, mapped to it (letters and digits before punctuation, then the lowest)."""
    table: dict[str, list[dict[str, str]]] = confusables.confusables_data
    out: dict[str, str] = {}
    for char, glyphs in table.items():
        group = [char, *(g["c"] for g in glyphs)]
        ascii_ = sorted((c for c in group if len(c) == 1 and c.isascii() and c.isalnum()),
                        key=lambda c: (not c.isalpha(), c))
        if not ascii_:
            continue
        for other in group:
            if len(other) == 1 and not other.isascii():
                out.setdefault(other, ascii_[0])
    return out


def lookalike(name: str) -> str:
    """``name`` with every character that looks like an ASCII letter or digit replaced by it
    (``"Vіctim1"`` with a Cyrillic "і" gives ``"Victim1"``)."""
    table = _to_ascii()
    return "".join(table.get(c, c) for c in name)
