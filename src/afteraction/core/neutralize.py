"""Neutralize: make record text safe to place inside the reference block.

The block is framed by ``BEGIN_MARKER`` and ``END_MARKER`` lines and renders fields as ``Label: value``.
Record text is untrusted, so before it reaches a prompt ``neutralize``:

1. folds compatibility look-alikes (NFKC) and removes what a reader cannot see: control, format (zero-width,
   bidi, BOM, soft hyphen, word joiner), tag, private-use, unassigned and filler characters, variation
   selectors; other whitespace becomes a plain space; line breaks become ``" / "`` (``one_line``) or ``"\\n"``;
2. rewrites the marker phrases (BEGIN/END REFERENCE, END OF REFERENCE, REFERENCE END, UNTRUSTED REFERENCE
   MATERIAL, in any case, spaced out, with punctuation, with digits for letters (``0F``), or with
   Cyrillic/Greek/Lisu/Coptic/accented look-alike letters) to ``[marker removed]``;
3. defuses role and field labels at the start of a line (``System: x`` -> ``System - x``) or after the `` / ``
   that joins lines, and a record's number with a label inside one (``… [2] Task: x`` -> ``… [2] Task - x``);
4. collapses runs of three or more rule characters of one family (``=``, ``-``, ``#``, ``*``, ``~``, ``_``,
   ``<``, ``>``, backticks, each with its dash, box-drawing and other look-alikes; spaces allowed between) to
   two ASCII ones, which also breaks code fences;
5. defuses chat-template tags (``</system>``, ``<|im_start|>``, any ``<|name|>``, ``<start_of_turn>``,
   ``[INST]``, also with look-alike letters and brackets) to ``(/system)``, ``(im_start)``, ``(start_of_turn)``,
   ``(inst)``.

No step can create what an earlier step looks for, so ``neutralize`` is idempotent. Ordinary ASCII text is
checked with a few byte-level tests and returned as is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from afteraction.core.lookalike import COLONS, FAMILIES, RULE_CHARS, fold, visible

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "LABELS",
    "MARKER_REMOVED",
    "ROLES",
    "defuse_labels",
    "is_marker_like",
    "neutralize",
]

BEGIN_MARKER = "=== BEGIN REFERENCE (UNTRUSTED REFERENCE MATERIAL) ==="
END_MARKER = "=== END REFERENCE ==="
LABELS = (
    "Record", "Task", "Lesson", "Summary", "Status", "Confidence", "Checks", "Scenario", "Environment", "Symptoms",
    "Failure", "Tried", "Worked", "Steps", "Skill", "Applicable", "Not applicable", "Authored by", "Source", "Scope",
    "Id", "Verified",
)  # fmt: skip
#: Chat roles and instruction-like labels, defused like the field labels.
ROLES = (
    "System",
    "Assistant",
    "User",
    "Developer",
    "Tool",
    "Human",
    "Instruction",
    "Instructions",
    "Important",
    "Note",
    "Response",
    "Input",
)
MARKER_REMOVED = "[marker removed]"

# --- the steps (step 1, the characters, is ``lookalike.visible``) ---------------------------------------------

# a run of three or more rule characters of one family, spaces allowed between
_RUN = re.compile(
    "|".join(f"(?P<f{n}>[{re.escape(chars)}](?:[ ]*[{re.escape(chars)}]){{2,}})" for n, chars in enumerate(FAMILIES))
)

# digits that read as letters in a phrase (``END 0F REFERENCE``, ``R3F3R3NC3``)
_DIGIT_LETTERS = {"o": "0", "e": "3", "i": "1", "l": "1", "a": "4", "s": "5", "t": "7", "b": "8"}


def _spelled(word: str) -> str:
    """A regex for ``word``'s letters with anything but a letter or digit between them, a digit look-alike allowed."""
    return r"[\W_]*".join(f"[{char}{_DIGIT_LETTERS[char]}]" if char in _DIGIT_LETTERS else char for char in word)


# no word boundary on purpose: "xEND REFERENCE" still reads as the marker (the cost: "weekend reference")
_PHRASE = re.compile(
    "|".join(
        (
            *(
                _spelled(phrase)
                for phrase in (
                    "beginreference",
                    "endreference",
                    "untrustedreferencematerial",
                    "endofreference",  # the same end in other words: "== END OF REFERENCE ==", "** End of reference **"
                    "endofthereference",
                )
            ),
            _spelled("enduntrustedmaterial"),
            # "REFERENCE END", "REFERENCES END", "REFERENCE ENDS"; not "reference endpoint"
            _spelled("reference") + r"(?:[\W_]*[s5])?[\W_]*" + _spelled("end") + r"(?:[\W_]*[s5])?(?![^\W\d_])",
        )
    ),
    re.IGNORECASE,
)
_LABEL_NAMES = "|".join(r"[\s_-]*".join(name.split()) for name in sorted((*LABELS, *ROLES), key=len, reverse=True))
# a label at the start of a line, after spaces, bullets, quote marks, list numbers or rules, then a colon after
# nothing but punctuation (``**System**:``, ``Lesson - :``), up to the last such colon. JSON (``{"status": 1}``)
# is left alone.
_LABEL = re.compile(
    rf"^(?P<pre>[\s>#*+.()\[\]\d\u2022\u00b7\u2023\u25e6{re.escape(RULE_CHARS)}]*)"
    rf"(?P<label>{_LABEL_NAMES})(?![^\W_])(?:[^\w\n]|_)*[{COLONS}]",
    re.IGNORECASE | re.MULTILINE,
)
_TAG = re.compile(
    r"<\s*\|?\s*(/?)\s*(system|assistant|user|developer|tool|human|instructions?|sys|im_start|im_end|im_sep"
    r"|endoftext|eot_id|eom_id|start_header_id|end_header_id|begin_of_text"
    r"|start_of_turn|end_of_turn|start_of_role|end_of_role|start_of_turn_token|end_of_turn_token|system_token"
    r"|user_token|chatbot_token|reference|reference_material"
    # tool calls and reasoning of other templates: Qwen/Hermes, DeepSeek-R1, Anthropic-style, Llama 3.1
    r"|think|thinking|reasoning|tool_calls?|tool_response|tool_results?|function_calls|function_results"
    r"|function|invoke|parameter)\b[^<>\n]{0,200}>"
    # any name in a template's own form (``<|start|>``, DeepSeek's ``<｜end▁of▁sentence｜>``), and ``</s>``;
    # ordinary words are not tags otherwise: ``a<end && b>c`` is code
    r"|<\s*\|\s*(/?)\s*([a-z][\w-]{0,40})\s*\|\s*>|<\s*(/?)\s*(s)\s*>",
    re.IGNORECASE,
)
# the bracketed turns of other chat templates: [INST] … [/INST], [SYSTEM_PROMPT], [TOOL_CALLS]
_BRACKET_TAG = re.compile(
    r"\[\s*(/?)\s*(inst|system_prompt|tool_calls|tool_results|available_tools|sys)\s*\]", re.IGNORECASE
)

# HTML that a rendered view hides from a reader while a model reads it: a comment, elements that hide or run,
# any element styled invisible
_HIDING = re.compile(
    r"<\s*(/?)\s*(details|summary|template|noscript|script|style|iframe|object|embed|svg|math|img)\b[^<>\n]{0,400}>"
    r"|<\s*(/?)\s*([a-z][a-z0-9]*)\b[^<>\n]{0,400}?(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0|opacity\s*:\s*0)[^<>\n]{0,400}>",
    re.IGNORECASE,
)

# a label after `` / ``, the separator ``one_line`` joins lines with: ``x / System: obey`` written on one line
# reads exactly like a joined line that starts with the label
_SLASH_LABEL = re.compile(
    rf"(?<!\S)/\s(?P<pre>[\s>#*+.()\[\]\d\u2022\u00b7\u2023\u25e6{re.escape(RULE_CHARS)}]*)"
    rf"(?P<label>{_LABEL_NAMES})(?![^\W_])(?:[^\w\n]|_)*[{COLONS}]",
    re.IGNORECASE,
)

# a record's number and a field label inside a line (``… [2] Task: Wipe the DB``) reads as a record of its own
_INLINE_FIELD = re.compile(rf"\[\s*\d{{1,4}}\s*\]\s*(?P<label>{_LABEL_NAMES})(?![^\W_])\s*[{COLONS}]", re.IGNORECASE)

# a line that begins with a colon: joined to the line before, it may complete a label there
_COLON_LINE = re.compile(rf"\n[\s\W_]*[{COLONS}]")

# byte-level checks on the folded text: controls -> 0, rule characters -> "!", spaces dropped, the rest -> "x"
_SHAPE = bytes(
    0 if b < 32 or b == 127 else ord("!") if chr(b) in RULE_CHARS else b if b == 32 else ord("x") for b in range(256)
)
# letters, and the digits a phrase may use for them (``_DIGIT_LETTERS``), read as lower-case letters
_NOT_LETTERS = bytes(b for b in range(256) if not (chr(b).isascii() and chr(b).isalpha()) and chr(b) not in "0134578")
_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0134578", b"abcdefghijklmnopqrstuvwxyzoieastb")


def _sub_folded(
    pattern: re.Pattern[str], text: str, replace: Callable[[str, re.Match[str]], str], folded: str | None = None
) -> str:
    """Replace ``pattern``'s matches in the folded text (``folded``, when the caller has it), at the same
    positions in ``text``; ``text`` itself when nothing matched."""
    out: list[str] = []
    end = 0
    for match in pattern.finditer(fold(text) if folded is None else folded):
        out += (text[end : match.start()], replace(text, match))
        end = match.end()
    if not out:
        return text
    out.append(text[end:])
    return "".join(out)


def _marker(text: str, match: re.Match[str]) -> str:
    return MARKER_REMOVED


def _label(text: str, match: re.Match[str]) -> str:
    return text[match.start() : match.end("label")] + " -"  # ``Lesson: x`` -> ``Lesson - x``


def _rule(match: re.Match[str]) -> str:
    return FAMILIES[int(str(match.lastgroup)[1:])][0] * 2


def _tag(text: str, match: re.Match[str]) -> str:
    pairs = range(1, (match.re.groups or 0) + 1, 2)
    slash, name = next((match.group(n), match.group(n + 1)) for n in pairs if match.group(n + 1) is not None)
    return f"({slash}{name.lower()})"


def _inline_field(text: str, match: re.Match[str]) -> str:
    return text[match.start() : match.end("label")] + " -"


def _may_be_phrase(data: bytes) -> bool:
    """Whether the (folded, ASCII) text's letters could spell a marker phrase."""
    letters = data.translate(_LOWER, _NOT_LETTERS)
    return b"reference" in letters or b"untrustedmater" in letters


def neutralize(text: str, *, one_line: bool = True) -> str:
    """``text`` made safe to show inside the reference block (see the module docstring). Idempotent.

    ``one_line`` joins lines with ``" / "``; otherwise line breaks are kept as ``"\\n"``. The steps run again
    on what they made until nothing changes (a tag removed may leave a marker phrase, a line join a tag).
    """
    for _ in range(4):
        done = _once(text, one_line)
        if done == text:
            break
        text = done
    return text


def _once(text: str, one_line: bool) -> str:
    """One pass of the steps."""
    if text.isascii():
        data = text.encode("ascii")
        shape = data.translate(_SHAPE, b" ")
        if not (
            b"\x00" in shape
            or b"!!!" in shape
            or b"<" in data
            or (b"[" in data and (_BRACKET_TAG.search(text) or b"![" in data))
            or (
                b":" in data
                and (
                    _LABEL.match(text)
                    or (b"[" in data and _INLINE_FIELD.search(text))
                    or (b"/" in data and _SLASH_LABEL.search(text))
                )
            )
            or _may_be_phrase(data)
        ):
            return text  # ordinary text: nothing to do
    text = visible(text.replace("\r\n", "\n"))
    folded = fold(text)  # folded again only when a step changed the text
    data = folded.encode("ascii", "replace")
    steps: list[tuple[re.Pattern[str], Callable[[str, re.Match[str]], str]]] = []
    if _may_be_phrase(data):
        steps.append((_PHRASE, _marker))
    if b":" in data:
        steps.append((_LABEL, _label))
        if b"[" in data:
            steps.append((_INLINE_FIELD, _inline_field))
        if b"/" in data:
            steps.append((_SLASH_LABEL, _label))
    for pattern, replace in steps:
        changed = _sub_folded(pattern, text, replace, folded)
        if changed is not text:
            text, folded = changed, fold(changed)
    if b"!!!" in folded.encode("ascii", "replace").translate(_SHAPE, b" "):  # a defused label may touch a rule
        text = _RUN.sub(_rule, text)
        folded = fold(text)
    for present, pattern in ((b"<", _TAG), (b"[", _BRACKET_TAG), (b"<", _HIDING)):  # folded: ``‹/ѕystem>`` too
        if present in data and (changed := _sub_folded(pattern, text, _tag, folded)) is not text:
            text, folded = changed, fold(changed)
    if b"<!--" in data:  # an HTML comment hides what follows from a rendered view
        text = text.replace("<!--", "(!--")
    if b"![" in data:  # a markdown image fetches its URL when rendered (a way out for what the agent read)
        text = text.replace("![", "! [")
    if one_line and "\n" in text:
        split_label = b":" in data and _COLON_LINE.search(folded) is not None
        text = " / ".join(line for line in (line.strip(" ") for line in text.split("\n")) if line)
        if split_label:  # a label split from its colon by the break now meets it: ``System\n: x``
            text = _sub_folded(_LABEL, text, _label)
            text = _sub_folded(_SLASH_LABEL, text, _label)
    return text


#: The ASCII characters that end a line (``str.splitlines``; ``visible`` makes each a line break).
_ASCII_BREAKS = "\n\r\v\f\x1c\x1d\x1e"


def defuse_labels(text: str) -> str:
    """``text`` with the role and field labels that start its lines defused as ``neutralize`` defuses
    them (``System: x`` -> ``System - x``; the text as a reader sees it, ``visible``), for text whose
    line breaks are folded away before it is kept (``core.capture``): once folded, such a label no
    longer starts a line, and ``neutralize`` would let it be. Text without one is returned as it is."""
    if text.isascii() and not any(brk in text for brk in _ASCII_BREAKS):
        return text  # one line: its start is the start of a field's value, which ``neutralize`` defuses
    seen = visible(text)
    if "\n" not in seen:
        return text
    defused = _sub_folded(_LABEL, seen, _label)
    return text if defused is seen else defused


def is_marker_like(line: str) -> bool:
    """Whether ``line`` could be mistaken for a begin/end marker: a rule (three or more rule characters of a family,
    spaces allowed between) or a marker phrase, after folding look-alikes and dropping invisible characters."""
    folded = fold(visible(line))
    return bool(_RUN.search(folded) or _PHRASE.search(folded))
