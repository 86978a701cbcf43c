"""English verb forms back to their infinitive, as `completeness` needs them to read a text the
way compromise's `toInfinitive()` leaves it: irregular verbs by table, regular ones by rule."""

from __future__ import annotations

# base past participle, for verbs whose past or participle is not base + "ed"
_IRREGULAR = """
arise arose arisen|awake awoke awoken|be was been|bear bore borne|beat beat beaten|become became become
begin began begun|bend bent bent|bet bet bet|bind bound bound|bite bit bitten|bleed bled bled
blow blew blown|break broke broken|breed bred bred|bring brought brought|build built built
burn burnt burnt|buy bought bought|catch caught caught|choose chose chosen|come came come|cost cost cost
creep crept crept|cut cut cut|deal dealt dealt|dig dug dug|do did done|draw drew drawn|dream dreamt dreamt
drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed fed fed|feel felt felt
fight fought fought|find found found|flee fled fled|fly flew flown|forbid forbade forbidden
forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given
go went gone|grind ground ground|grow grew grown|hang hung hung|have had had|hear heard heard
hide hid hidden|hit hit hit|hold held held|hurt hurt hurt|keep kept kept|kneel knelt knelt|know knew known
lay laid laid|lead led led|lean leant leant|leap leapt leapt|learn learnt learnt|leave left left
lend lent lent|let let let|lie lay lain|light lit lit|lose lost lost|make made made|mean meant meant
meet met met|pay paid paid|put put put|quit quit quit|read read read|ride rode ridden|ring rang rung
rise rose risen|run ran run|say said said|see saw seen|seek sought sought|sell sold sold|send sent sent
set set set|shake shook shaken|shine shone shone|shoot shot shot|show showed shown|shrink shrank shrunk
shut shut shut|sing sang sung|sink sank sunk|sit sat sat|sleep slept slept|slide slid slid
speak spoke spoken|speed sped sped|spend spent spent|spin spun spun|split split split|spread spread spread
spring sprang sprung|stand stood stood|steal stole stolen|stick stuck stuck|sting stung stung
strike struck struck|swear swore sworn|sweep swept swept|swim swam swum|swing swung swung
take took taken|teach taught taught|tear tore torn|tell told told|think thought thought|throw threw thrown
understand understood understood|wake woke woken|wear wore worn|win won won|write wrote written
"""
#: Bases ending in a silent e that losing it (making, used) leaves too short to be recognised.
_E_BASES = frozenset(
    [
        "make",
        "take",
        "come",
        "give",
        "use",
        "have",
        "live",
        "move",
        "love",
        "leave",
        "drive",
        "write",
        "ride",
        "hide",
        "type",
        "save",
        "hope",
        "vote",
        "like",
        "bake",
        "share",
        "care",
        "close",
        "create",
        "manage",
        "compare",
        "choose",
        "lose",
        "arrive",
        "argue",
        "believe",
        "change",
        "charge",
        "decide",
        "declare",
        "describe",
        "explore",
        "hate",
        "improve",
        "include",
        "judge",
        "name",
        "note",
        "phone",
        "place",
        "prepare",
        "produce",
        "promise",
        "provide",
        "receive",
        "reduce",
        "refuse",
        "release",
        "remove",
        "replace",
        "require",
        "retire",
        "rule",
        "serve",
        "solve",
        "store",
        "suppose",
        "wave",
        "wipe",
        "price",
        "rate",
        "state",
        "smile",
        "file",
        "fire",
        "bite",
        "dine",
    ]
)

FORMS: dict[str, str] = {}
for _entry in _IRREGULAR.replace("\n", "|").split("|"):
    if _entry.strip():
        _base, _past, _participle = _entry.split()
        FORMS[_past] = FORMS[_participle] = _base
FORMS.update({"was": "be", "were": "be", "been": "be", "is": "be", "are": "be", "am": "be"})
FORMS.update({"has": "have", "does": "do", "goes": "go"})
BASES = frozenset(FORMS.values())
#: Every base this module knows as a verb.
KNOWN_BASES = BASES | _E_BASES
VOWELS = frozenset("aeiou")


def _restore(stem: str) -> str:
    """A stem whose ending was cut off, as its base: planned -> plan, making -> make, tried -> try."""
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in VOWELS and stem[-1] not in "lsz":
        return stem[:-1]  # stopped, planning (but missed keeps miss, called call)
    if len(stem) > 5 and stem.endswith("ll"):
        return stem[:-1]  # cancelled, travelling
    if stem + "e" in _E_BASES or stem + "e" in BASES:
        return stem + "e"
    return stem


def infinitive(word: str) -> str | None:
    """`word`'s infinitive when it is an inflected verb form this recognises, else None."""
    base = FORMS.get(word)
    if base is not None:
        return base
    if word in BASES or word in _E_BASES:
        return None  # bring, sing: a base already
    if len(word) > 4 and word.endswith("ing"):
        return _restore(word[:-3])
    if len(word) > 4 and word.endswith("ied"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("ed"):
        return _restore(word[:-2]) if not word.endswith("eed") else word
    return None


def third_person(word: str) -> str | None:
    """The base of a third-person singular form (goes, flies, fixes, uses), else None."""
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ches", "shes", "sses", "xes", "zzes", "oes")):
        return word[:-2]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return None
