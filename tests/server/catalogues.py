"""What the language tests share: the message catalogues (server/web/static/i18n/*.json), the
text a page shows, and the English left in it when it speaks another language.

A page in Japanese fails the check when its visible text holds the literal part of an English
catalogue string whose Japanese differs (a string that bypassed the catalogue), or any English
word of three letters or more that is not a name the test allows (a string that never went into
the catalogue at all). What the page marks data-verbatim is the server's own data (level names,
descriptions admins wrote, players' names, chat lines) and is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from playwright.async_api import Page

CATALOGUES = Path(__file__).resolve().parents[2] / "server" / "web" / "static" / "i18n"
PLACEHOLDER = re.compile(r"\{(\w+)\}")

VISIBLE_TEXT = """() => {
  // Every visible text node of the page, the visible fields' placeholders, and the title;
  // what is marked data-verbatim is the server's own data (the levels' names and notes).
  const out = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    const text = node.textContent.trim();
    if (!text || !el || el.closest('[data-verbatim]')) continue;
    const shown = el.tagName === 'OPTION' ? el.closest('select') : el;
    if (shown.checkVisibility()) out.push(text);
  }
  for (const el of document.querySelectorAll('[placeholder]')) {
    if (!el.checkVisibility() || el.closest('[data-verbatim]')) continue;
    out.push(el.getAttribute('placeholder'));
  }
  return out;
}"""


def catalogue(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def forms(entry: str | dict[str, str]) -> list[str]:
    return list(entry.values()) if isinstance(entry, dict) else [entry]


def untranslated_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """The literal parts of every English string whose Japanese differs, as whole-word
    patterns (fragments of two letters or fewer, like "s" of "{s} s", say nothing)."""
    en, ja = catalogue("en"), catalogue("ja")
    patterns: list[tuple[str, re.Pattern[str]]] = []
    for key, entry in en.items():
        japanese = set(forms(ja[key]))
        for text in forms(entry):
            if text in japanese:
                continue
            for part in PLACEHOLDER.split(text)[::2]:
                part = part.strip(" .,:;·—()…?!“”'")
                if sum(ch.isalpha() for ch in part) > 2:
                    word = rf"(?<![A-Za-z]){re.escape(part)}(?![A-Za-z])"
                    patterns.append((key, re.compile(word)))
    return patterns


async def english_left(page: Page, patterns: list[tuple[str, re.Pattern[str]]],
                       names: Iterable[str]) -> list[str]:
    """What ``page`` shows in English: a catalogue string, or a word of three letters or more
    that is none of ``names``."""
    allowed = set(names)
    texts: list[str] = await page.evaluate(VISIBLE_TEXT)
    left = [f"{key}: {text!r}" for text in texts for key, pattern in patterns
            if pattern.search(text)]
    left += [f"word {word!r} in {text!r}" for text in texts
             for word in re.findall(r"[A-Za-z]{3,}", text) if word not in allowed]
    return left
