"""What a reader sees of a text: the character layer under ``neutralize`` and the secret scrubber.

``visible`` is the text as a reader sees it: compatibility look-alikes folded (NFKC), control, format
(zero-width, bidi, BOM, soft hyphen, word joiner), tag, private-use, unassigned and filler characters and
variation selectors removed, other whitespace a plain space. ``may_hide`` says quickly whether ``visible``
could change a text. ``fold`` maps look-alike letters (Cyrillic, Greek, Armenian, Cherokee, small capitals,
Lisu, Coptic), rule characters and colons to ASCII, one character for one, for detection only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = ["COLONS", "FAMILIES", "RULE_CHARS", "fold", "may_hide", "may_mix", "visible"]


def _span(first: int, last: int) -> str:
    return "".join(map(chr, range(first, last + 1)))


# Rule characters by family: the ASCII character first, then its look-alikes.
FAMILIES = (
    "=\u2261\u2263\u2a75\u2a76\ua78a\u30a0\u1400\u3013" + _span(0x2550, 0x256C),
    "-\u058a\u05be\u1806\u2043\u2212\u23af\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u3030\ufe31\ufe32\ufe58\ufe63\uff0d"
    "\u203e\u00af" + _span(0x2010, 0x2015) + _span(0x2500, 0x254F) + _span(0x256D, 0x259F),
    "#\u266f\u2317",
    "*\u2217\u204e\u2051\u2731\u2732\u2733\u2734\u2735\u273b\u273c\u273d\u274b",
    "~\u2053\u223c\u02dc\uff5e\u301c",
    "_\u2017",
    "<\u00ab\u2039\u300a\u3008\u27e8\u226a\u22d8\u276e\u1438\u02c2",
    ">\u00bb\u203a\u300b\u3009\u27e9\u226b\u22d9\u276f\u1433\u02c3",
    "`\u02cb\u2035",
)
RULE_CHARS = "".join(FAMILIES)
COLONS = ":\u2236\ua789\u02d0\u02f8\u05c3\u0589\u0703\u0704\u1804\u205a\u2982\u16ec\ua4fd"

_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f\u2800\u3164\uffa0\U0001d159"
    + _span(0xFE00, 0xFE0F)
    + _span(0xE0100, 0xE01EF)
)
_REMOVED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))


class _LazyMap(dict[int, "int | str | None"]):
    """A ``str.translate`` table decided per code point on first sight, then cached."""

    def __init__(self, decide: Callable[[str], int | str | None]) -> None:
        super().__init__()
        self._decide = decide

    def __missing__(self, cp: int) -> int | str | None:
        value = self[cp] = self._decide(chr(cp))
        return value


def _visible_char(char: str) -> int | str | None:
    """Keep a character (its code point), delete it (None), or make it a space or a line break."""
    if char in _LINE_BREAKS:
        return "\n"
    if char == "\t":
        return " "
    if char in _INVISIBLE:
        return None
    category = unicodedata.category(char)
    if category in _REMOVED_CATEGORIES:
        return None
    return " " if category[0] == "Z" else ord(char)


# Letters that look Latin but NFKC keeps apart: Cyrillic, Greek, Armenian, Cherokee, small capitals, Lisu, Coptic.
_CONFUSABLES = dict(
    zip(
        "АВЕКМНОРСТХЅІЈаеіјорсуххѕԁһԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιϲϳɡıǀօսոցհᎪᏴᏟᎬᏀᎻᎡᏚᎢᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜ"
        "ꓐꓑꓒꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ"
        "ᎠᖇĐđƎɌϜИⴹƬ"
        "ⲀⲂⲆⲈⲌⲎⲒⲔⲘⲚⲞⲢⲤⲦⲨⲪⲬⲁⲉⲓⲕⲟⲣⲥⲧⲭ",
        "ABEKMHOPCTXSIJaeijopcyxxsdhqwABEZHIKMNOPTYXoicjgilounghABCEGHRSTabcdefghijklmnoprstu"
        "BPdDTGKJCZFMNLSRVHWXYAEIOU"
        "DRDdERFNET"
        "ABDEZHIKMNOPCTYFXaeikopctx",
        strict=True,
    )
)
_FOLDS = {
    **_CONFUSABLES,
    **{char: family[0] for family in FAMILIES for char in family[1:]},
    **dict.fromkeys(COLONS[1:], ":"),
    **dict.fromkeys("\u27e6\u301a\u3010\u3014\u2045\u27ec\u3016\u3018", "["),  # ⟦INST⟧, 【INST】 …
    **dict.fromkeys("\u27e7\u301b\u3011\u3015\u2046\u27ed\u3017\u3019", "]"),
    # vertical bars (``<│im_start│>``): box-drawing verticals are not the rules of their family
    **dict.fromkeys("\u2502\u2503\u2551\u2506\u2507\u250a\u250b\u254e\u254f\u2223\u23aa\u23d0", "|"),
    # enclosed capitals NFKC keeps (🅴🅽🅳, 🅔, 🇪): squared, negative circled, negative squared, regional indicators
    **{chr(base + n): chr(ord("A") + n) for base in (0x1F130, 0x1F150, 0x1F170, 0x1F1E6) for n in range(26)},
}


def _folded_char(char: str) -> int | str | None:
    """Detection only, one character for one: look-alike letters, rules and colons fold to ASCII."""
    if char in _FOLDS:
        return _FOLDS[char]
    base = unicodedata.normalize("NFD", char)[0]
    return base if base.isascii() and base.isalpha() else ord(char)


_VISIBLE = _LazyMap(_visible_char)
_FOLD = _LazyMap(_folded_char)


def _visible(text: str) -> str:
    if text.isascii():
        return text if text.isprintable() else text.translate(_VISIBLE)
    for _ in range(4):  # NFKC and removal may each expose work for the other; stable after a round or two
        done = unicodedata.normalize("NFKC", text).translate(_VISIBLE)
        if done == text:
            break
        text = done
    return text


def _ranges(chars: set[str]) -> str:
    """A regex class of ``chars`` written as ranges (a class of hundreds of single characters is slow to search)."""
    runs: list[list[int]] = []
    for point in sorted(map(ord, chars)):
        if runs and point == runs[-1][1] + 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return "[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in runs) + "]"


# the characters of ``_INVISIBLE`` that ``str.isprintable`` passes (``may_hide`` checks the others by category)
_INVISIBLE_PRINTABLE = re.compile(_ranges({char for char in _INVISIBLE if char.isprintable()}))


def may_hide(text: str) -> bool:
    """Whether ``visible(text)`` could differ from ``text`` (tab and line breaks aside): a quick necessary
    condition at C speed, which decides by the same categories (``str.isprintable`` is False for every removed
    category and every space but " "), NFKC, and the invisible characters that are printable."""
    if not text.isprintable():
        bare = text.replace("\n", "").replace("\t", "").replace("\r", "")
        if not bare.isprintable():
            return True
    return not text.isascii() and (
        not unicodedata.is_normalized("NFKC", text) or _INVISIBLE_PRINTABLE.search(text) is not None
    )


def visible(text: str) -> str:
    """``text`` as a reader sees it: look-alikes folded (NFKC), invisible characters gone, other spaces plain
    (step 1 of ``neutralize``, line breaks kept). The secret scrubber looks at this form too."""
    return _visible(text)


def fold(text: str) -> str:
    """``text`` for detection only, one character for one (positions kept): look-alike letters, rule characters
    and colons as their ASCII forms."""
    return text if text.isascii() else text.translate(_FOLD)


_MIXED = re.compile(r"[A-Za-z0-9][^\x00-\x7f]|[^\x00-\x7f][A-Za-z0-9]")
_LOOK_ALIKE_LETTER = re.compile(_ranges(set(_CONFUSABLES)))


def may_mix(text: str) -> bool:
    """Whether ``fold`` could change how a word reads: a character outside ASCII touches an ASCII letter or
    digit (``ѕk-proj-…``, ``pаssword``), or a letter that looks Latin stands anywhere (``АРІ_ΚЕΥ`` spelled
    wholly in Cyrillic and Greek). Ordinary punctuation between words (``attempt 0 — X``) is not."""
    return not text.isascii() and (_MIXED.search(text) is not None or _LOOK_ALIKE_LETTER.search(text) is not None)
