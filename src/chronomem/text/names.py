"""Names compared as people mean them: the lookup form the stores index and the key merging compares.

:func:`normalize_name` finds candidates; :func:`name_key` decides whether two spellings are one name
(case, accents, typographic variants, abbreviations, legal forms, ordinals, ...); the character folds
it is built from (:func:`fold_accents`, :func:`plain_punctuation`, :func:`visible_text`) are shared
with grounding, which checks a quote against its message under the same folds.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata

__all__ = [
    "WRITTEN_NAME", "fold_accents", "name_key", "normalize_name", "plain_punctuation", "split_legal_form",
    "visible_text",
]

# a name as running text writes it, for patterns that read one: up to four capitalised words, after
# a title or "St." ("Ana", "Marés Logistics", "Dr. Okafor", "St. Louis"); a regular expression's text
WRITTEN_NAME = r"(?:(?:St|Mt|Ft|Dr|Mr|Mrs|Ms|Prof)\.\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,3}"


_PUNCTUATION = re.compile(r"[^\w\s]")


def normalize_name(name: str) -> str:
    """The coarse *lookup* form the stores index: NFKC, casefolded, punctuation dropped, spaces folded.

    It finds candidates, it does not decide: "C#" and "C" share it. Merging compares :func:`name_key`.
    """
    # NFKC leaves ASCII as it is, and casefold is lower there: the common case skips both.
    text = name.lower() if name.isascii() else unicodedata.normalize("NFKC", name).casefold()
    return " ".join(_PUNCTUATION.sub(" ", text).split())


# Typographic variants of the ASCII quote, apostrophe and hyphen (NFKC keeps them apart). The
# modifier letters are what keyboards and word processors put for an apostrophe ("O\u02bcReilly",
# "Hawai\u02bbi"); the acute accent is mapped before NFKC, which would make it a space and a mark.
_TYPOGRAPHIC = str.maketrans(
    dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4\u02bb\u02bc`", "'")
    | dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"')
    | dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-")
)
_LETTER = r"[^\W\d_]"
_SPACED_INITIALS = re.compile(rf"(?<![\w.])(?:{_LETTER}\.\s+)+{_LETTER}\.(?=\s|$)")  # "e. o. wilson"
_DOTTED_ACRONYM = re.compile(rf"(?<![\w.]){_LETTER}(?:\.{_LETTER})+\.?(?!\w)")  # "u.s.a." -> "usa"
_ABBREVIATION_DOT = re.compile(rf"(?<={_LETTER})\.(?=\s|$)")  # "st. louis", "inc.", "jr."
_COMMA_BEFORE_SPACE = re.compile(r",(?=\s)")  # "acme, inc", "kennedy, jr"
_TRAILING = re.compile(r"[.,;:]+$")  # not "!" or "?": "Go!" is not Go, "Jeopardy!" keeps it
_JOINING_DASH = re.compile(r"(?<=\w)\s*-\s*(?=\w)")  # "coca-cola" = "coca cola"
_LETTER_DIGIT = re.compile(rf"(?<={_LETTER})(?=\d)|(?<=\d)(?={_LETTER})")  # "ua1234" = "ua 1234"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # "1,000 Islands" = "1000 Islands"; "3,5" stays
_HTML_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
_NUMBER_SIGN = re.compile(r"(?<!\w)#\s*(?=\d)")  # "#58213" = "58213"; "c#" keeps its sign
# "AT & T" is "AT&T": an ampersand between two abbreviations in capitals (at most three letters each)
# joins them, spaced or not. Between words it is "and" ("Johnson & Johnson", below).
_SPACED_AMPERSAND = re.compile(r"(?<![\w&])([A-Z]{1,3})\s+&\s+([A-Z]{1,3})(?![\w&])")
# A catalogue's "Beatles, The" is "The Beatles" (then the next rule: "Who, The" stays "The Who").
# Only "the": after a comma, "A" is an initial ("Smith, A") and "An" a given name ("Nguyen, An").
_INVERTED_ARTICLE = re.compile(r"^(.*\S),\s*the$")
# a leading article, unless what follows is one short word ("The Who") or starts with a digit ("The 1975")
# other than an ordinal's before another word ("The 7th Seal" = "The Seventh Seal" = "Seventh Seal")
_LEADING_ARTICLE = re.compile(rf"^(?:the|an?)\s+(?={_LETTER}(?:\S{{3}}|\S*\s+\S)|\d+(?:st|nd|rd|th)\s+\S)")
# "St."/"Mt."/"Ft." opening a name and followed by a word are Saint, Mount, Fort ("St. Petersburg").
# Only there: inside a name "St." may be Street ("Elm St. Station"), and a digit may follow a code ("ST 4").
_LEADING_TITLE = re.compile(rf"^(st|mt|ft)\.?\s+(?={_LETTER})")
_TITLES = {"st": "saint", "mt": "mount", "ft": "fort"}
# The long spelling of a legal form is its abbreviation ("Acme Corporation" = "Acme Corp"). "Limited"
# is not folded: it is also a trim level ("Grand Cherokee Limited").
_LONG_LEGAL_FORM = re.compile(r"(?<=\s)(incorporated|corporation)$")
_LEGAL_ABBREVIATION = {"incorporated": "inc", "corporation": "corp"}
# Legal forms that name nothing but the company's legal form. Not "Co"/"Company" ("East India
# Company" is not "East India"), "AG" (Texas AG), "SA"/"AB" (South Africa, Alberta), "SpA" (spa).
_LEGAL_FORM = re.compile(r"\s(pty ltd|inc|llc|ltd|corp|plc|gmbh|llp)$")
# Abbreviations that are only a way of writing a word. A street type's, past a name's first word
# ("Baker St" = "Baker Street", "Mt. Pleasant Rd" = "Mt. Pleasant Road"): first, "St." is Saint and
# "Ave" opens "Ave Maria". "Dr" only closing a name ("Mulholland Dr." = Drive): elsewhere it is Doctor.
# An organisation word's, anywhere ("Dept. of Justice", "Univ. of Michigan", "Warner Bros."). Not "Ct"
# (Connecticut), "Co" (Colorado, cobalt), "Pl", "Mt"/"Ft" inside a name, nor number words ("Air Force
# One" the plane is not "Air Force 1" the shoe).
_STREET_TYPES = {"st": "street", "ave": "avenue", "blvd": "boulevard", "rd": "road", "ln": "lane",
                 "hwy": "highway", "pkwy": "parkway", "sq": "square"}
_ORGANISATION_WORDS = {"dept": "department", "univ": "university", "intl": "international",
                       "natl": "national", "assn": "association", "bros": "brothers", "govt": "government"}
_STREET_TYPE = re.compile(r"(?<=\s)(" + "|".join(_STREET_TYPES) + r")(?=\s|$)")
# An ordinal is one whether written in words or in digits ("Fifth Avenue" = "5th Avenue", "Twenty-First
# Century Fox" = "21st Century Fox"): the suffix says it is an ordinal, so no look-alike hides in it.
# Cardinals stay apart ("Air Force One" is not "Air Force 1").
_UNIT_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_ORDINAL_WORDS = dict(zip((*_UNIT_ORDINALS, "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                           "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"), range(1, 20),
                          strict=True))
_TENS = ("twent", "thirt", "fort", "fift", "sixt", "sevent", "eight", "ninet")
_ORDINAL_WORDS |= {f"{ten}ieth": 10 * (i + 2) for i, ten in enumerate(_TENS)}
_TENS_WORD = {f"{ten}y": 10 * (i + 2) for i, ten in enumerate(_TENS)}
_ORDINAL_WORD = re.compile(
    r"(?<!\w)(?:(" + "|".join(_TENS_WORD) + r") )?(" + "|".join(_ORDINAL_WORDS) + r")(?!\w)")
_ORDINAL_DIGITS = re.compile(r"(?<!\w)(\d+) (st|nd|rd|th)(?!\w)")  # "5 th" (spaced above) -> "5th"


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _ordinal_word(match: re.Match[str]) -> str:
    tens, unit = match[1], _ORDINAL_WORDS[match[2]]
    if tens is None:
        return _ordinal(unit)
    if unit >= 10:  # "twenty tenth" is no ordinal: leave the words
        return match[0]
    return _ordinal(_TENS_WORD[tens] + unit)
_CLOSING_DRIVE = re.compile(r"(?<=\s)dr$")
_ORGANISATION_WORD = re.compile(r"(?<!\w)(" + "|".join(_ORGANISATION_WORDS) + r")(?!\w)")


def _letters_nfkd_keeps() -> dict[int, str]:
    """Latin letters that NFKD cannot take apart, read from their Unicode names so that none is
    forgotten: a letter whose mark is drawn into it ("ø", LATIN SMALL LETTER O WITH STROKE; "ł",
    "đ", "ħ") is its bare letter, and a typographic ligature ("œ", LATIN SMALL LIGATURE OE) its
    letters. Not the letters of their own that a transliteration spells with two ("æ", LATIN SMALL
    LETTER AE, and "þ", "ð", "ı"): "Ærø" the Danish island is not "Aero" the chocolate bar."""
    table = {}
    for code in (*range(0x00C0, 0x0250), *range(0x1E00, 0x1F00)):
        if unicodedata.decomposition(chr(code)):
            continue  # NFKD takes it apart
        name = unicodedata.name(chr(code), "")
        found = (re.fullmatch(r"LATIN (SMALL|CAPITAL) LETTER ([A-Z]) WITH .+", name)
                 or re.fullmatch(r"LATIN (SMALL|CAPITAL) LIGATURE ([A-Z]+)", name))
        if found:
            table[code] = found[2].lower() if found[1] == "SMALL" else found[2]
    return table


_LETTERS_NFKD_KEEPS = _letters_nfkd_keeps()


def fold_accents(text: str) -> str:
    """``text`` without accents, nor the marks drawn into a letter ("Łódź" → "Lodz"), ligatures spelled out."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).translate(_LETTERS_NFKD_KEEPS)
    return unicodedata.normalize("NFC", bare)


def plain_punctuation(text: str) -> str:
    """``text`` with its typographic quotes, apostrophes and dashes as their ASCII forms ("I’m" → "I'm")."""
    return text.translate(_TYPOGRAPHIC)


def visible_text(name: str) -> str:
    """``name`` without what a reader cannot see or does not read as part of it: format characters
    (a soft hyphen, a zero-width space or joiner, a byte-order mark, direction marks: Unicode's
    category Cf, what copy and paste leaves in a name), variation selectors, and the trademark signs
    ("Coca-Cola®", "Post-it™": NFKC would spell ™ as the letters TM)."""
    if name.isascii():
        return name
    return "".join(c for c in name if unicodedata.category(c) != "Cf" and c not in _NOT_PART_OF_A_NAME
                   and not ("\ufe00" <= c <= "\ufe0f"))


_NOT_PART_OF_A_NAME = frozenset("\u00ae\u2122\u2120")  # ® ™ ℠


@functools.lru_cache(maxsize=65536)
def name_key(name: str) -> str:
    """The conservative form under which two names are the *same* name (merged without a model).

    Folded: case, whitespace, accents (and the marks drawn into a letter: "ø", "ł", "đ"), typographic
    ligatures ("œ"), typographic quotes, apostrophes and dashes, what a reader does not see or read as
    part of a name (format characters such as a soft hyphen or a zero-width space, trademark signs),
    a catalogue's trailing article ("Beatles, The"), the spaces around an ampersand between
    abbreviations ("AT & T" = "AT&T"), HTML entities ("AT&amp;T"), a comma grouping thousands
    ("1,000 Islands" = "1000 Islands"), a dash or a space joining two
    words, a space between letters and digits, the dots of "U.S.A." and of abbreviations, the dots
    and spaces of initials ("E. O." = "E.O." = "EO"), a comma before a space, a trailing period,
    comma or colon, a spaced "&" for "and", a "#" before a number, enclosing quotes, a leading
    "the"/"a"/"an" (not before one short word, "The Who", or a digit, "The 1975"), a leading
    "St."/"Mt."/"Ft." for Saint/Mount/Fort ("St. Petersburg" = "Saint Petersburg"; only at the
    start, where it cannot be Street), a trailing "Incorporated"/"Corporation" for "Inc"/"Corp", a
    street type's abbreviation past the first word ("Baker St" = "Baker Street", "Mulholland Dr." =
    "Mulholland Drive"), an organisation word's ("Dept.", "Univ.", "Intl", "Bros.") and an ordinal's
    words ("Fifth Avenue" = "5th Avenue", "Twenty-First" = "21st"). Kept, so
    never merged: every letter and digit (numbers, versions, codes, letter suffixes, roman numerals,
    "Jr."), symbols that carry meaning ("C#", "C++", "Disney+", "AT&T", "Go!"), apostrophes (the
    possessive is not the plural: "Buffalo Bill's" is not the "Buffalo Bills"), brackets, and the
    letters a transliteration spells with two ("æ", "þ": "Ærø" the island is not "Aero"). Roman
    and arabic numerals stay apart ("Toy Story II" / "2"): some series use both for different things
    (Mega Man II on the Game Boy, Mega Man 2 on the NES). A legal form is kept too;
    :func:`split_legal_form` lets resolution match it with the bare name. The rules and the pairs
    that decide each are in ``bench/data/resolution_pairs.json``.
    """
    if _HTML_ENTITY.search(name):  # "AT&amp;T", "L&#39;Oréal": a web page's or an export's spelling
        name = html.unescape(name)
    text = plain_punctuation(unicodedata.normalize("NFKC", plain_punctuation(visible_text(name))))
    text = _SPACED_AMPERSAND.sub(r"\1&\2", text).casefold()
    text = " ".join(fold_accents(text).split())
    if len(text) > 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    text = _INVERTED_ARTICLE.sub(r"the \1", text)
    text = _LEADING_ARTICLE.sub("", text)
    text = _LEADING_TITLE.sub(lambda m: _TITLES[m[1]] + " ", text)
    text = _SPACED_INITIALS.sub(lambda m: "".join(m[0].split()), text)
    text = _DOTTED_ACRONYM.sub(lambda m: m[0].replace(".", ""), text)
    text = _ABBREVIATION_DOT.sub("", text)
    text = _TRAILING.sub("", _COMMA_BEFORE_SPACE.sub("", text))
    text = text.replace(" & ", " and ")
    text = _NUMBER_SIGN.sub("", _JOINING_DASH.sub(" ", _THOUSANDS.sub("", text)))
    text = " ".join(_LETTER_DIGIT.sub(" ", text).split())
    text = _ORDINAL_WORD.sub(_ordinal_word, _ORDINAL_DIGITS.sub(r"\1\2", text))
    text = _STREET_TYPE.sub(lambda m: _STREET_TYPES[m[1]], _CLOSING_DRIVE.sub("drive", text))
    text = _ORGANISATION_WORD.sub(lambda m: _ORGANISATION_WORDS[m[1]], text)
    return _LONG_LEGAL_FORM.sub(lambda m: _LEGAL_ABBREVIATION[m[1]], text)


def split_legal_form(name: str) -> tuple[str, str | None]:
    """A name's :func:`name_key` without its trailing legal form, and that form ("inc", "llc", ...).

    ("Google LLC" → ("google", "llc"); "Acme, Inc." → ("acme", "inc"); "Google" → ("google", None)).
    Resolution merges a name with a legal form and the same bare name, never two different forms.
    """
    key = name_key(name)
    found = _LEGAL_FORM.search(key)
    if found is None or found.start() == 0:
        return key, None
    return key[: found.start()], found[1]
