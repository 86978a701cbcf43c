"""`completeness` against Mastra's own scorer on many generated question/answer pairs.

Sentences are made from templates that each exercise one thing compromise (the NLP library
Mastra's scorer uses) normalises: irregular and regular verb forms (past, participle, -s, -ing),
auxiliaries and modals, contractions and negations, numbers, acronyms, proper nouns and
hyphenated words. Each pair is an input and an output that shares some of it (the same sentence,
its statement form, another sentence with the same opening, or the two concatenated). Mastra's
scores come from `bench/mastra/completeness.mjs` (`make bench-mastra` installs it); the report
is the share of pairs within 0.01 of Mastra's score, per template, and the elements on which the
two sides differ most often.

    python bench/completeness_parity.py [--pairs 2000] [--seed 11]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from otel_scorers.model import AgentRun
from otel_scorers.scorers.code.completeness import completeness, elements

MASTRA = Path(__file__).resolve().parent / "mastra"
# base, third person, past, participle, gerund
VERBS = [
    line.split()
    for line in """go goes went gone going|see sees saw seen seeing|take takes took taken taking
run runs ran run running|write writes wrote written writing|buy buys bought bought buying
think thinks thought thought thinking|bring brings brought brought bringing|eat eats ate eaten eating
drink drinks drank drunk drinking|begin begins began begun beginning|fly flies flew flown flying
give gives gave given giving|know knows knew known knowing|sing sings sang sung singing
swim swims swam swum swimming|speak speaks spoke spoken speaking|tell tells told told telling
understand understands understood understood understanding|win wins won won winning
wear wears wore worn wearing|drive drives drove driven driving|choose chooses chose chosen choosing
forget forgets forgot forgotten forgetting|catch catches caught caught catching
teach teaches taught taught teaching|sell sells sold sold selling|leave leaves left left leaving
keep keeps kept kept keeping|build builds built built building|send sends sent sent sending
meet meets met met meeting|pay pays paid paid paying|make makes made made making
find finds found found finding|get gets got gotten getting|come comes came come coming
hold holds held held holding|lose loses lost lost losing|hear hears heard heard hearing
deploy deploys deployed deployed deploying|fix fixes fixed fixed fixing|try tries tried tried trying
study studies studied studied studying|stop stops stopped stopped stopping|plan plans planned planned planning
use uses used used using|create creates created created creating|book books booked booked booking
cancel cancels cancelled cancelled cancelling|check checks checked checked checking
explain explains explained explained explaining|recommend recommends recommended recommended recommending""".replace(
        "\n", "|"
    ).split("|")
]
SINGULAR = [
    "the team",
    "Alice",
    "Dr. Smith",
    "NASA",
    "the U.S. government",
    "IBM",
    "my brother",
    "the CEO",
    "our API",
    "Google",
    "the FBI",
    "she",
    "he",
    "María",
    "the model",
]
PLURAL = ["I", "you", "we", "they", "John and Mary", "the children", "the engineers"]
OBJECTS = [
    "the report",
    "a car",
    "the weather in Paris",
    "3 apples",
    "42 books",
    "the 2024 budget",
    "$1,000",
    "10% of the shares",
    "twenty-one tickets",
    "a well-known author",
    "the state-of-the-art model",
    "a long-term plan",
    "an e-mail",
    "the follow-up meeting",
    "Mount Everest",
    "New York",
    "London's museums",
    "Shakespeare's plays",
    "the HTML page",
    "an API key",
    "3.5 kilograms",
    "the iPhone 15",
    "Windows 11",
    "the COVID-19 vaccine",
    "version 2.0",
    "the U.K.",
    "a self-driving car",
    "Microsoft's cloud",
    "the 1990s",
    "the first-class seats",
    "María's café",
    "O'Brien's pub",
    "the Q3 results",
    "GPT-4",
    "the NATO summit",
    "a flight to Tokyo",
    "the hotel in Rome",
    "the invoices",
    "the refund",
    "their order #4521",
]
WHEN = [
    "",
    "",
    "quickly",
    "yesterday",
    "today",
    "last week",
    "in 2019",
    "at 5pm",
    "on Monday",
    "twice",
    "for 3 hours",
    "before the meeting",
]
MODALS = ["can", "could", "will", "would", "should", "might", "must", "may"]
WH = ["What", "Why", "How", "When", "Where", "Who", "Which", "How many"]
NEGATIONS = {
    False: ["doesn't", "didn't", "can't", "won't", "shouldn't"],
    True: ["don't", "didn't", "won't", "couldn't"],
}
BE_CONTRACTED = ["I'm", "We're", "They're", "You're", "It's", "She's", "He's"]
HAVE_CONTRACTED = ["I've", "We've", "They've", "She's", "He's", "I'd"]


def sentence(rng: random.Random) -> tuple[str, str]:
    """A sentence and the name of its template."""
    plural = rng.random() < 0.4
    who = rng.choice(PLURAL if plural else SINGULAR)
    base, third, past, participle, gerund = rng.choice(VERBS)
    what, when = rng.choice(OBJECTS), rng.choice(WHEN)
    tail = f" {when}" if when else ""
    templates = {
        "question, did": f"{rng.choice(WH)} did {who} {base} {what}{tail}?",
        "past": f"{who} {past} {what}{tail}.",
        "present": f"{who} {base if plural else third} {what}{tail}.",
        "question, modal": f"{rng.choice(MODALS).capitalize()} {who} {base} {what}{tail}?",
        "modal": f"{who} {rng.choice(MODALS)} {base} {what}{tail}.",
        "negation": f"{who} {rng.choice(NEGATIONS[plural])} {base} {what}{tail}.",
        "contracted be": f"{rng.choice(BE_CONTRACTED)} {gerund} {what}{tail}.",
        "contracted have": f"{rng.choice(HAVE_CONTRACTED)} {participle} {what}{tail}.",
        "perfect, and past": f"{who} {'have' if plural else 'has'} {participle} {what}, and {rng.choice(PLURAL)} {rng.choice(VERBS)[2]} {rng.choice(OBJECTS)}.",
        "question, progressive": f"{rng.choice(WH)} {'are' if plural else 'is'} {who} {gerund} {what}{tail}?",
        "imperative": f"Please {base} {what}{tail}.",
    }
    name = rng.choice(list(templates))
    return templates[name], name


def pairs(count: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        question, template = sentence(rng)
        other, _ = sentence(rng)
        kind = rng.random()
        if kind < 0.35:
            answer = question.replace("?", ".")
        elif kind < 0.7:
            answer = f"{question.split(' ', 1)[0]} {rng.choice(OBJECTS)} {rng.choice(WHEN)}.".replace(
                " .", "."
            )
        elif kind < 0.85:
            answer = f"{other} {question}"
        else:
            answer = other
        made.append({"input": question, "output": answer, "template": template})
    return made


def ours(question: str, answer: str) -> float:
    run = AgentRun(trace_id=1, span_id=1, agent_name="agent", input=question, output=answer)
    value = completeness().score(run).value
    assert value is not None
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    cases = pairs(args.pairs, args.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump({"pairs": cases}, file)
        file.flush()
        found = subprocess.run(
            ["node", str(MASTRA / "completeness.mjs"), file.name], capture_output=True, text=True, check=True
        )
    theirs = json.loads(found.stdout)
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    only_theirs: Counter[str] = Counter()
    only_ours: Counter[str] = Counter()
    for case, mastra in zip(cases, theirs, strict=True):
        total[case["template"]] += 1
        if abs(ours(case["input"], case["output"]) - mastra["score"]) <= 0.01:
            agree[case["template"]] += 1
        for text, their_elements in ((case["input"], mastra["input"]), (case["output"], mastra["output"])):
            mine = set(elements(text.strip()))
            only_theirs.update(set(their_elements) - mine)
            only_ours.update(mine - set(their_elements))
    print(
        f"completeness within 0.01 of Mastra's: {sum(agree.values())} of {len(cases)} pairs "
        f"({sum(agree.values()) / len(cases):.1%})"
    )
    for template in sorted(total, key=lambda name: agree[name] / total[name]):
        print(
            f"  {template:<22} {agree[template]:>4} of {total[template]:<4} ({agree[template] / total[template]:.1%})"
        )
    print("elements only Mastra's side has:", ", ".join(f"{w} {n}" for w, n in only_theirs.most_common(15)))
    print("elements only ours has:        ", ", ".join(f"{w} {n}" for w, n in only_ours.most_common(15)))


if __name__ == "__main__":
    main()
