"""Writing tasks: what a prompt asks for before its constraints are added.

A task kind has a category (the `category` field of a suite row), a response format and a few
templates whose slots ({topic}, {recipient}, ...) are filled from the banks in `topics`. A slot
written with a capital ({Org}) is filled with a capitalised value, for the start of a sentence.
Summaries carry their own passage, built from interchangeable sentences so that no two passages
are near-copies of each other.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from rsi_hub.suites import topics
from rsi_hub.suites.rng import Rng

# Response formats the responder knows how to write.
PROSE, LIST, STEPS, TABLE, JSON_OBJECT, JSON_ANY, JSON_ARRAY = (
    "prose", "list", "steps", "table", "json_object", "json_any", "json_array",
)  # fmt: skip


@dataclass(frozen=True)
class TaskKind:
    """One kind of writing task: its category name, response format and templates."""

    name: str
    fmt: str
    templates: tuple[str, ...]


PROSE_KINDS: tuple[TaskKind, ...] = (
    TaskKind("email", PROSE, (
        "Write an email to {recipient} about {topic}.",
        "Draft a short email to {recipient} announcing {event}.",
        "Compose an email to {recipient} asking for feedback on a proposal about {topic}.",
        "Write an email from {name}, who works at {org} in {city}, to {recipient} about {topic}.",
        "Send {recipient} a brief email inviting them to {event} in {city}.",
    )),
    TaskKind("product_description", PROSE, (
        "Write a product description for {product}.",
        "Write the online shop description of {product} for {audience}.",
        "Describe {product} for a catalog page.",
        "Write a short sales pitch for {product}, aimed at {audience}.",
    )),
    TaskKind("explanation", PROSE, (
        "Explain {topic} to {audience}.",
        "Explain to {audience} why {topic} matters.",
        "Give {audience} a plain-language explanation of {topic}.",
        "How would you explain {topic} to {audience}?",
    )),
    TaskKind("story", PROSE, (
        "Write a short story about {character} in {city}.",
        "Tell a short story in which {character} gets interested in {topic}.",
        "Write a bedtime story about {character} and a friend named {name}.",
        "Write a short story that takes place during {event}.",
    )),
    TaskKind("letter", PROSE, (
        "Write a letter to {recipient} about {topic}.",
        "Write a formal letter to {recipient} asking for support for {event}.",
        "Write a thank-you letter to {name} for helping with {event}.",
        "Write a letter of recommendation for {name}, who volunteered at {org}.",
    )),
    TaskKind("review", PROSE, (
        "Write a customer review of {product}.",
        "Write an honest review of {product} after a month of use.",
        "Review {event} in {city} for a local blog.",
        "Write a review of {product} for {audience}.",
    )),
    TaskKind("instructions", PROSE, (
        "Write instructions for {howto}.",
        "Explain how to go about {howto}, for {audience}.",
        "Give a beginner advice on {howto}.",
        "Describe, in plain prose, the process of {howto}.",
    )),
    TaskKind("blog_post", PROSE, (
        "Write the opening of a blog post about {topic}.",
        "Write a short blog post on {topic} for {audience}.",
        "Write a blog introduction that makes {audience} curious about {topic}.",
    )),
    TaskKind("social_post", PROSE, (
        "Write a social media post announcing {event} in {city}.",
        "Write a post for the social media page of {org} about {topic}.",
        "Write a short post promoting {product}.",
    )),
    TaskKind("speech", PROSE, (
        "Write a short toast for {occasion}.",
        "Write a brief speech for {occasion}, to be given by {name}.",
        "Write a few words {name} could say at {occasion}.",
    )),
    TaskKind("advice", PROSE, (
        "Give {audience} advice on {topic}.",
        "A friend asks you for advice about {topic}. What do you tell them?",
        "Write advice for {audience} who want to get started with {topic}.",
    )),
    TaskKind("announcement", PROSE, (
        "Write an announcement for {recipient} about {event}.",
        "Write a notice from {org} announcing changes related to {topic}.",
        "Write an announcement inviting {audience} to {event} in {city}.",
    )),
    TaskKind("news_brief", PROSE, (
        "Write a short news brief about {event} in {city}.",
        "Write a local news item about how {org} in {city} is handling {topic}.",
    )),
    TaskKind("faq_answer", PROSE, (
        "Write the answer for the FAQ page of {org} to the question: what should I know "
        "about {topic}?",
        "A customer of {org} asks how {topic} affects them. Write the reply.",
    )),
    TaskKind("note", PROSE, (
        "Write an encouraging note to {name}, who is nervous about {topic}.",
        "Write a short motivational message for {audience} about {topic}.",
        "Write an apology note to {recipient} for missing {event}.",
    )),
    TaskKind("comparison", PROSE, (
        "Compare {product} with a cheaper alternative.",
        "Write a short comparison of two approaches to {topic}.",
    )),
)  # fmt: skip

SUMMARY = TaskKind("summary", PROSE, (
    "Summarize the passage below.",
    "Write a summary of the following text for {audience}.",
    "In your own words, summarize this report.",
    "Read the passage and summarize its main points.",
))  # fmt: skip

STRUCTURED_KINDS: dict[str, TaskKind] = {
    LIST: TaskKind("list", LIST, (
        "List tips for {topic}.",
        "Give reasons why {audience} might enjoy {topic}.",
        "Suggest ideas for {event} in {city}.",
        "List the main steps of {howto}.",
        "Name the benefits of {product}.",
        "Brainstorm questions {audience} might ask about {topic}.",
        "List common mistakes people make with {topic}.",
    )),
    STEPS: TaskKind("list", STEPS, (
        "I already wrote steps 1 to {prev} of a guide to {howto}. Write the next steps.",
        "The first {prev} items of my checklist for {howto} are done. Add the next few items.",
        "Continue this numbered guide on {howto}; steps 1 to {prev} are already written.",
    )),
    TABLE: TaskKind("table", TABLE, (
        'Make a table about {topic} with the columns "{col_a}" and "{col_b}".',
        'Summarize {topic} in a table whose columns are "{col_a}" and "{col_b}".',
        'Organize plans for {event} in a table with the columns "{col_a}" and "{col_b}".',
        'Help {audience} with {howto}: make a table with the columns "{col_a}" and "{col_b}".',
    )),
    JSON_OBJECT: TaskKind("json", JSON_OBJECT, (
        "Create a JSON record describing {product}.",
        "Describe {event} as a JSON record.",
        "Store this contact as JSON: {name}, who works at {org} in {city}.",
        "Write a JSON profile for a course on {topic}.",
    )),
    JSON_ANY: TaskKind("json", JSON_ANY, (
        "Give the contact details of {org} in {city} as a JSON object.",
        "Return the opening information for {event} as a JSON object.",
        "Describe where to find more information about {topic}, as a JSON object.",
    )),
    JSON_ARRAY: TaskKind("json", JSON_ARRAY, (
        "List name ideas for {product} as a JSON array of strings.",
        "Give taglines for {event} as a JSON array of strings.",
        "Suggest questions about {topic} as a JSON array of strings.",
        "Write short reminders for {howto} as a JSON array of strings.",
    )),
}  # fmt: skip

# Keys a JSON task may require, by the template's subject (index into JSON_OBJECT templates).
JSON_SCHEMAS: tuple[tuple[str, ...], ...] = (
    ("name", "price", "category", "description", "color"),
    ("title", "date", "location", "organizer", "audience"),
    ("name", "organization", "city", "role", "email"),
    ("title", "level", "duration", "summary", "instructor"),
)
JSON_ANY_KEYS: tuple[tuple[str, ...], ...] = (
    ("email", "phone", "website"),
    ("opens", "closes", "hours"),
    ("url", "book", "contact"),
)
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Item", "Why it helps"),
    ("Task", "Owner"),
    ("Day", "Activity"),
    ("Tool", "Use"),
    ("Step", "Time needed"),
    ("Idea", "Cost"),
    ("Question", "Answer"),
    ("Place", "Reason to visit"),
    ("Habit", "Benefit"),
    ("Mistake", "Fix"),
    ("Option", "Price"),
    ("Skill", "How to practice"),
)

# Passage sentences for summaries: one sentence is drawn from each part, in order.
PASSAGE_PARTS: tuple[tuple[str, ...], ...] = (
    (
        "Last {month}, {org} in {city} began a pilot program on {topic}.",
        "A survey of {n3} residents of {city} found strong interest in {topic}.",
        "{Name} started thinking about {topic} after moving to {city} in {year}.",
        "On a {day} in {month}, {org} hosted a public meeting about {topic}.",
        "Researchers at {org} in {city} spent {n4} months studying {topic}.",
        "The {month} issue of the {city} community newsletter focused on {topic}.",
        "When {org} announced a new policy on {topic} in {month}, reactions were mixed.",
        "A group of students in {city} chose {topic} for their {year} science fair project.",
    ),
    (
        "{Name}, who leads the effort, said {n1} people signed up within {n2} weeks.",
        "About {pct} percent of those asked wanted more support, according to {name}.",
        "Within {n4} months the idea had {n1} regular participants and a waiting list.",
        "Nearly {n1} people attended, and {name} counted {n2} pages of written comments.",
        "They compared {n3} households and found that costs fell by {pct} percent.",
        "Readers sent in {n1} letters, more than for any issue since {year}.",
        "Staff at first welcomed the plan, but {n2} teams questioned the {month} timeline.",
        "Over {n4} weeks they collected {n1} measurements and drew {n2} charts.",
    ),
    (
        "Younger people were the most enthusiastic, while older residents of {city} worried about cost.",
        "Several speakers asked for more data, and {name} proposed a trial of {n4} months.",
        "Volunteers praised the friendly tone but asked {org} for clearer schedules.",
        "Families who planned ahead reported less stress, a finding {name} called striking.",
        "Some readers disagreed sharply with the editor, {name}, about the costs involved.",
        "After {n2} weeks of feedback, managers at {org} extended the deadline.",
        "Their teacher, {name}, praised their patience and their careful notes.",
        "Local shops in {city} reported {pct} percent more visitors on weekends.",
    ),
    (
        "The program will expand to {n2} more neighborhoods by {year} if funding holds.",
        "The city council of {city} plans to discuss the findings in {month}.",
        "{Name} says the biggest challenge now is finding time to rest.",
        "Organizers promised to publish all comments within {n2} weeks.",
        "The authors hope {org} will use the results to advise new parents.",
        "A follow-up issue with expert interviews is planned for {month} {year}.",
        "{Name}, a spokesperson, called the change a lesson in listening.",
        "The project won a prize and will be shown at {org} in {month}.",
    ),
)

MONTHS: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
DAYS: tuple[str, ...] = (
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
)

# Slot name -> (bank, partitioned by suite group?)
_BANKS: dict[str, tuple[tuple[str, ...], bool]] = {
    "topic": (topics.TOPICS, True),
    "product": (topics.PRODUCTS, True),
    "howto": (topics.HOWTOS, True),
    "event": (topics.EVENTS, True),
    "recipient": (topics.RECIPIENTS, False),
    "audience": (topics.AUDIENCES, False),
    "occasion": (topics.OCCASIONS, False),
    "character": (topics.CHARACTERS, False),
    "name": (topics.NAMES, False),
    "city": (topics.CITIES, False),
    "org": (topics.ORGS, False),
    "month": (MONTHS, False),
    "day": (DAYS, False),
}
_NUMBERS: dict[str, tuple[int, int]] = {
    "n1": (20, 400),
    "n2": (2, 12),
    "n3": (200, 3000),
    "n4": (2, 18),
    "pct": (5, 60),
    "year": (2018, 2026),
}


class SlotFiller:
    """Fills template slots for one prompt; a slot used twice gets the same value."""

    def __init__(self, rng: Rng, group: str, preset: dict[str, str] | None = None) -> None:
        self._rng = rng
        self._group = group
        self.values: dict[str, str] = dict(preset or {})

    def value(self, slot: str) -> str:
        key = slot.lower()
        if key not in self.values:
            if key in _NUMBERS:
                lo, hi = _NUMBERS[key]
                self.values[key] = str(self._rng.randint(lo, hi))
            elif key in _BANKS:
                bank, partitioned = _BANKS[key]
                items = topics.for_group(bank, self._group) if partitioned else bank
                self.values[key] = self._rng.choice(items)
            else:
                raise KeyError(f"unknown template slot {{{slot}}}")
        text = self.values[key]
        return text[:1].upper() + text[1:] if slot[:1].isupper() else text

    def fill(self, template: str) -> str:
        """The template with every slot replaced."""
        parts = []
        for literal, field, _spec, _conv in string.Formatter().parse(template):
            parts.append(literal)
            if field is not None:
                parts.append(self.value(field))
        return "".join(parts)


def passage(filler: SlotFiller, rng: Rng) -> str:
    """A four-sentence passage about the filler's topic, for a summary task."""
    return " ".join(filler.fill(rng.choice(part)) for part in PASSAGE_PARTS)
