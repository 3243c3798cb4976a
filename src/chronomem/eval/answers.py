"""Gold answers against text, without a model: ``answer_in_context`` and LoCoMo's token F1.

**answer_in_context** asks whether a context block holds a question's gold answer at all — the
ceiling of what any reader model can answer from it. Both sides are normalised the same way
(case folded, punctuation and the articles a/an/the dropped, whitespace collapsed) and the answer
must appear as whole words. A gold answer matches in any of its written forms:

- numbers as digits or words, cardinal or ordinal ("3" / "three", "2nd" / "second"), up to 100;
- dates as the context block writes them ("2023-05-07") and as people do ("7 May 2023",
  "May 7, 2023", "7th May 2023"); a month and year ("May 2023") also as "2023-05";
- a list ("pottery, camping and painting") matches when every item appears, in any order.

An answer that states no fact (LongMemEval's abstention explanations and preference rubrics) is not
looked for: the harness leaves those questions out and says how many it left.

**LoCoMo's F1** is the benchmark's own: both strings lower-cased, commas, punctuation and the words
a/an/the/and removed, each word Porter-stemmed, then the F1 of the shared words. Multi-hop answers
(category 1) are lists: each gold item takes its best F1 against the items of the prediction (split
on commas), averaged. Open-domain gold answers (category 3) keep the part before a ";". Adversarial
questions (category 5) score 1 when the prediction says the information is not available.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

from chronomem.eval.porter import stem

__all__ = ["answer_forms", "answer_in_context", "locomo_f1", "normalize", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_WORD = re.compile(r"[^\w\s]|_")
_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_ONES = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORDINAL_TENS = ["twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"]
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_ABBREVIATIONS = {m[:3]: i for i, m in enumerate(_MONTHS, start=1)} | {"sept": 9}


def normalize(text: str) -> str:
    """Case folded, punctuation → spaces, articles dropped, whitespace collapsed."""
    text = _NON_WORD.sub(" ", text.casefold())
    return " ".join(_ARTICLES.sub(" ", text).split())


# -- written forms ----------------------------------------------------------------------------------


def number_words(n: int, *, ordinal: bool = False) -> str | None:
    """0–100 in words ("forty two", "forty second"); ``None`` past 100."""
    if not 0 <= n <= 100:
        return None
    if n == 100:
        return "one hundredth" if ordinal else "one hundred"
    if n < 20:
        return (_ORDINAL_ONES if ordinal else _ONES)[n]
    tens, ones = divmod(n, 10)
    if ones == 0:
        return (_ORDINAL_TENS if ordinal else _TENS)[tens - 2]
    return f"{_TENS[tens - 2]} {(_ORDINAL_ONES if ordinal else _ONES)[ones]}"


def _word_numbers() -> dict[str, tuple[int, bool]]:
    table: dict[str, tuple[int, bool]] = {}
    for n in range(101):
        for ordinal in (False, True):
            words = number_words(n, ordinal=ordinal)
            if words is not None:
                table[words] = (n, ordinal)
    return table


_WORD_NUMBERS = _word_numbers()
_WORD_NUMBER = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _WORD_NUMBERS), key=len, reverse=True)) + r")\b")
_DIGITS = re.compile(r"\b([1-9]\d{0,2}|0)(st|nd|rd|th)?\b")  # "05" of a date stays digits


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _number_variants(form: str) -> set[str]:
    """``form`` with its numbers in the other notation (digits ↔ words), one notation at a time."""
    as_words = _DIGITS.sub(lambda m: number_words(int(m[1]), ordinal=bool(m[2])) or m[0], form)
    as_digits = _WORD_NUMBER.sub(lambda m: _in_digits(*_WORD_NUMBERS[m[1]]), form)
    return {form, as_words, as_digits}


def _in_digits(n: int, ordinal: bool) -> str:
    return f"{n}{_ordinal_suffix(n)}" if ordinal else str(n)


def _month(word: str) -> int | None:
    word = word.casefold().rstrip(".")
    if word in _MONTHS:
        return _MONTHS.index(word) + 1
    return _MONTH_ABBREVIATIONS.get(word)


_MONTH_WORD = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_WORD},?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH_WORD}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH_WORD},?\s+(\d{{4}})\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b")


def _date_forms(year: int, month: int, day: int | None) -> set[str]:
    name = _MONTHS[month - 1]
    if day is None:
        return {f"{name} {year}", f"{year} {month:02d}"}
    return {
        f"{day} {name} {year}",
        f"{name} {day} {year}",
        f"{day}{_ordinal_suffix(day)} {name} {year}",
        f"{name} {day}{_ordinal_suffix(day)} {year}",
        f"{year} {month:02d} {day:02d}",
    }


def _date_variants(raw: str) -> list[tuple[str, set[str]]]:
    """Each date the raw answer names (its text, its written forms, normalised)."""
    found: list[tuple[str, set[str]]] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match[str], year: int, month: int | None, day: int | None) -> None:
        if month is None or not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
            return
        if any(start < match.end() and match.start() < end for start, end in taken):
            return
        taken.append(match.span())
        found.append((normalize(match[0]), {normalize(f) for f in _date_forms(year, month, day)}))

    for m in _ISO_DATE.finditer(raw):
        add(m, int(m[1]), int(m[2]), int(m[3]))
    for m in _DAY_MONTH_YEAR.finditer(raw):
        add(m, int(m[3]), _month(m[2]), int(m[1]))
    for m in _MONTH_DAY_YEAR.finditer(raw):
        add(m, int(m[3]), _month(m[1]), int(m[2]))
    for m in _MONTH_YEAR.finditer(raw):
        add(m, int(m[2]), _month(m[1]), None)
    return found


def answer_forms(answer: str) -> set[str]:
    """Every normalised written form of ``answer`` (see the module docstring)."""
    forms = {normalize(answer)}
    for text, variants in _date_variants(answer):
        forms |= {form.replace(text, variant) for form in forms for variant in variants if text}
    for form in list(forms):
        forms |= _number_variants(form)
    return {f for f in forms if f}


def _items(answer: str) -> list[str]:
    """The items of a list answer ("a, b and c"), or [] when it is not a list."""
    parts = [p.strip() for p in re.split(r",|;|\band\b", answer) if p.strip()]
    return parts if len(parts) > 1 else []


def _contains(haystack: str, forms: Iterable[str]) -> bool:
    padded = f" {haystack} "
    return any(f" {form} " in padded for form in forms)


def answer_in_context(answer: str, context: str) -> bool:
    """Whether ``context`` holds ``answer`` in one of its written forms (or, for a list, every item)."""
    text = normalize(context)
    if _contains(text, answer_forms(answer)):
        return True
    items = _items(answer)
    return bool(items) and all(_contains(text, answer_forms(item)) for item in items)


# -- LoCoMo's F1 ------------------------------------------------------------------------------------

_F1_DROPPED = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _f1_tokens(text: str) -> list[str]:
    text = text.replace(",", "").casefold().translate(_PUNCTUATION)
    return [stem(word) for word in _F1_DROPPED.sub(" ", text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """The F1 of the stemmed words two answers share."""
    predicted, expected = _f1_tokens(prediction), _f1_tokens(gold)
    shared = sum((Counter(predicted) & Counter(expected)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(expected)
    return 2 * precision * recall / (precision + recall)


_NOT_AVAILABLE = ("no information available", "not mentioned")


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's score of one answer in its category (see the module docstring)."""
    if category == 5:
        return float(any(phrase in prediction.casefold() for phrase in _NOT_AVAILABLE))
    if category == 1:
        predictions = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in gold.split(",") if g.strip()] or [gold]
        return sum(max(token_f1(p, g) for p in predictions) for g in golds) / len(golds)
    if category == 3:
        gold = gold.split(";")[0].strip()
    return token_f1(prediction, gold)
