"""The checksums that tell a card number or an IBAN from any other digits and letters."""

from __future__ import annotations

#: The countries of the IBAN registry (ISO 13616): an IBAN not written in capitals must start
#: with one, as so many words and hashes pass the checksum by chance (1 in 97).
_IBAN_COUNTRIES = frozenset(
    "AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO FR GB GE GI GL "  # noqa: SIM905
    "GR GT HN HR HU IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL NO "
    "OM PK PL PS PT QA RO RS RU SA SC SD SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE".split()
)


def luhn_valid(digits: str) -> bool:
    """The Luhn check of a string of digits (payment card numbers)."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        number = ord(char) - 48
        if position % 2:
            number *= 2
            if number > 9:
                number -= 9
        total += number
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """ISO 13616: the first four characters moved to the end, letters as 10..35, mod 97 is 1."""
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in moved)) % 97 == 1


def iban(found: str) -> bool:
    """An IBAN as found in text: its checksum holds and, unless it is in capitals, its country is
    one of the registry's."""
    if found[:2].isupper() and found.isupper():
        return iban_valid(found)
    return found[:2].upper() in _IBAN_COUNTRIES and iban_valid(found.upper())
