"""The lexical source judge: offline, deterministic, the default everywhere.

For an entry it measures how much of the entry's checkable content appears in the
sources a judge may use (the pooled evidence, the retained turn and the previous
summary), and how forward-looking its wording is:

* ``id_overlap``: share of the entry's identifiers and numbers (tokens with a digit,
  e.g. ``INV-104``, ``120.50``) found in the sources; ``n_ids`` how many it has;
* ``word_overlap``: share of its content words (3+ letters, not stop words, not cue
  words) found in the sources;
* ``cue``: 1 when it uses forward-looking language (will, should, next, plan, need to,
  todo, remaining, then, must ...), else 0.

The fixed mapping to a probability is a logistic function::

    z = -1.0 + 3.0 * id_overlap * [n_ids > 0] - 1.5 * [n_ids > 0] * (1 - id_overlap)
        + 2.5 * word_overlap - 1.5 * cue
    score = 1 / (1 + exp(-z))

so an entry whose identifiers and words all appear in the evidence scores about 0.99,
and a plan with nothing observed scores about 0.08. The coefficients were set by hand,
not fitted; the function is a transparent baseline, not a trained model.

Identifiers and words are read from every text through :func:`workbench._util.long_tokens.bound_tokens` (a run of
over 1,024 non-space characters is read as its first 1,024), so one long token costs linear time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from workbench.judges._base import JudgeRequest, JudgeResult
from workbench._util.long_tokens import bound_tokens

#: an identifier: letters, an optional ``-`` or ``_``, a digit, then word characters and ``.-/:`` (``INV-104``,
#: ``120.50``, ``a7-q``). Written so that findall finds the same matches as ``[A-Za-z]*[-_]?\d[\w.\-/:]*`` in one
#: pass: a match never starts after an ASCII letter (one that could would start with that letter's run, which is
#: tried first and sees the same rest), and the run's letters are never given back (a letter cannot match ``[-_]``
#: or ``\d``). The plain pattern tried every start inside a run of letters: 0.84 against 0.26 s on the texts one
#: judge run of the testbed tokenizes (31,515 of about 285 characters), the same matches on each.
_ID = re.compile(r"(?<![A-Za-z])[A-Za-z]*+[-_]?\d[\w.\-/:]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z']{2,}")
_CUES = frozenset(
    "will should shall next plan planned planning need needs needed must todo to-do remaining remain "
    "then later pending intend going continue ensure afterwards upcoming".split()
)
_STOP = frozenset(
    "the and for with that this from are was were has have had not but all any its into onto our your their "
    "them they you per via than then also only each every been being what which when where who whom whose "
    "there here about after before over under out off one two invoice invoices".split()
)


@dataclass(frozen=True)
class LexicalFeatures:
    n_ids: int
    id_overlap: float
    n_words: int
    word_overlap: float
    cue: bool


def _ids(text: str) -> set[str]:
    return {s.strip(".,;:-/").lower() for s in _ID.findall(bound_tokens(text))} - {""}


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(bound_tokens(text))}


@dataclass(frozen=True)
class Sources:
    """The identifiers, words and lower-cased text of everything a judge may cite, built once per request."""

    ids: frozenset[str]
    words: frozenset[str]
    text: str

    @classmethod
    def of(cls, text: str) -> Sources:
        """The sources of one text: its identifiers, its words and the text lower-cased."""
        return cls(frozenset(_ids(text)), frozenset(_words(text)), text.lower())

    @classmethod
    def of_parts(cls, parts: Sequence[str]) -> Sources:
        """``Sources.of`` the parts joined by newlines, from each part's terms (remembered per part: logs repeat tool
        outputs). Equal to ``of("\\n".join(parts))``: neither an identifier nor a word can span a newline."""
        terms = [_part_terms(p) for p in parts]
        return cls(frozenset().union(*(i for i, _ in terms)), frozenset().union(*(w for _, w in terms)),
                   "\n".join(parts).lower())


@lru_cache(maxsize=1 << 16)
def _part_terms(text: str) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(_ids(text)), frozenset(_words(text))


@lru_cache(maxsize=1 << 16)
def _entry_terms(entry: str) -> tuple[frozenset[str], frozenset[str], bool]:
    """An entry's identifiers, content words and whether it has a cue word; remembered per text (entries repeat)."""
    entry_words = _words(entry)
    words = frozenset(w for w in entry_words if w not in _STOP and w not in _CUES)
    return frozenset(_ids(entry)), words, bool(entry_words & _CUES)


def features(entry: str, sources: str | Sources) -> LexicalFeatures:
    """The lexical features of one entry against the source text."""
    src = sources if isinstance(sources, Sources) else Sources.of(sources)
    return LexicalFeatures(*_overlaps(entry, src))


def _overlaps(entry: str, src: Sources) -> tuple[int, float, int, float, bool]:
    """``LexicalFeatures``' fields: an identifier is found among the sources' identifiers or in their text, a
    word among their words (set intersections; the features once a judged entry, 373,410 on the testbed)."""
    ids, words, cue = _entry_terms(entry)
    id_hits = 0
    if ids:
        found = ids & src.ids
        id_hits = len(found) + sum(1 for i in ids - found if i in src.text)
    return (len(ids), id_hits / len(ids) if ids else 0.0, len(words),
            len(words & src.words) / len(words) if words else 0.0, cue)


def probability(f: LexicalFeatures) -> float:
    """The fixed logistic mapping of the module docstring.

    Parameters
    ----------
    f : LexicalFeatures
        An entry's features.

    Returns
    -------
    float
        The probability the entry is supported.
    """
    return _logistic(f.n_ids, f.id_overlap, f.word_overlap, f.cue)


def _logistic(n_ids: int, id_overlap: float, word_overlap: float, cue: bool) -> float:
    has_ids = 1.0 if n_ids else 0.0
    z = -1.0 + 3.0 * id_overlap * has_ids - 1.5 * has_ids * (1.0 - id_overlap) + 2.5 * word_overlap - 1.5 * float(cue)
    return 1.0 / (1.0 + math.exp(-z))


class LexicalJudge:
    """Evidence overlap of identifiers, numbers and content words, plus forward-looking cues."""

    name = "lexical"
    context_tokens = 10**9  # no context limit: never splits

    def score(self, request: JudgeRequest, repeat: int = 0) -> JudgeResult:
        """Deterministic and local: every repeat gives the same scores, nothing is sent."""
        sources = Sources.of_parts([*request.evidence, request.retained_turn, request.previous_summary])
        scores: list[float | None] = []
        for entry in request.entries:  # probability(features(entry, sources)), without the dataclass between
            n_ids, id_overlap, _n_words, word_overlap, cue = _overlaps(entry, sources)
            scores.append(_logistic(n_ids, id_overlap, word_overlap, cue))
        return JudgeResult(scores=scores, reasons=[None] * len(scores),
                           request_ids=[request.request_id] * len(scores), requests=1)


__all__ = ["LexicalJudge", "probability"]
