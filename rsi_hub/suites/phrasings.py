"""How each constraint is said: several natural phrasings per check type, and the text banks.

A model that only learned one wording of "exactly 40 words" has not learned the constraint, so
every check type has several phrasings and numbers are written as digits or as words ("forty").
The banks of required openings, closings, phrases and words live here too, because what a
constraint may ask for is part of how it is phrased.
"""

from __future__ import annotations

from rsi_hub.numbers import number_words
from rsi_hub.suites.rng import Rng


def render_number(n: int, rng: Rng) -> str:
    """Digits or words; words less often for long numbers, as people write them."""
    p_words = 0.4 if n <= 20 else 0.3 if n < 100 else 0.15
    return number_words(n) if rng.chance(p_words) else str(n)


def render_times(n: int, rng: Rng) -> str:
    """'once', 'twice', '3 times', 'three times' ..."""
    if n == 1:
        return rng.choice(("once", "one time", "1 time"))
    if n == 2 and rng.chance(0.5):
        return "twice"
    return f"{render_number(n, rng)} times"


def quote_list(items: list[str], joiner: str = "and") -> str:
    """'"a"', '"a" and "b"', '"a", "b" and "c"'."""
    quoted = [f'"{item}"' for item in items]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + f" {joiner} " + quoted[-1]


# Templates per check type. Placeholders: {n} a number, {noun} its noun in the right number,
# {times} 'exactly N times' wording, {w} a word, {text} a phrase, {c}/{C} a letter,
# {plural}/{singular} a punctuation mark's name, {keys} a quoted key list, {lo}/{hi} a band.
PHRASINGS: dict[str, tuple[str, ...]] = {
    "word_eq": (
        "Use exactly {n} words.",
        "Your answer must be exactly {n} words long.",
        "Write precisely {n} words, no more and no fewer.",
        "The response should contain exactly {n} words in total.",
        "Make it exactly {n} words.",
        "Keep the length at exactly {n} words.",
        "Your reply must have a word count of exactly {n}.",
        "It has to be {n} words long: not one more, not one less.",
    ),
    "word_max": (
        "Use no more than {n} words.",
        "Keep it to at most {n} words.",
        "Do not exceed {n} words.",
        "Stay within {n} words.",
        "Limit your answer to {n} words or fewer.",
        "The whole response must be {n} words or shorter.",
    ),
    "word_min": (
        "Write at least {n} words.",
        "Use {n} words or more.",
        "Make it no shorter than {n} words.",
        "The response needs a minimum of {n} words.",
    ),
    "word_band": (
        "Keep it between {lo} and {hi} words.",
        "The length should be {lo} to {hi} words.",
        "Use at least {lo} but no more than {hi} words.",
        "Aim for a length of {lo}-{hi} words.",
    ),
    "word_times": (
        'Use the word "{w}" exactly {times}.',
        'The word "{w}" must appear exactly {times}.',
        'Include the word "{w}" {times}, no more and no fewer.',
        'Mention "{w}" exactly {times}.',
        'Make sure "{w}" occurs exactly {times} in your response.',
        'Repeat the word "{w}" exactly {times}.',
    ),
    "sent": (
        "Write exactly {n} {noun}.",
        "Answer in exactly {n} {noun}.",
        "Your response must consist of exactly {n} {noun}.",
        "Use precisely {n} {noun}, each ending with a period, question mark or exclamation mark.",
        "Keep it to exactly {n} {noun}.",
        "The reply should be exactly {n} {noun} long.",
        "It must contain {n} {noun}, no more and no fewer.",
    ),
    "sent_min": (
        "Write at least {n} {noun}.",
        "Use {n} or more {noun}.",
        "Make it no shorter than {n} {noun}.",
    ),
    "sent_max": (
        "Use at most {n} {noun}.",
        "Do not write more than {n} {noun}.",
        "Keep it to {n} {noun} or fewer.",
    ),
    "para": (
        "Split your response into exactly {n} paragraphs separated by a blank line.",
        "Write exactly {n} paragraphs, with a blank line between paragraphs.",
        "Organize the answer as {n} paragraphs separated by blank lines.",
        "Use exactly {n} paragraphs (separate them with an empty line).",
    ),
    "contains": (
        'Include the exact text "{text}" (same capitalization).',
        'Your response must contain "{text}" exactly as written.',
        'Use the phrase "{text}" verbatim, with the same capitalization.',
    ),
    "contains_norm": (
        'Include the phrase "{text}".',
        'Make sure to mention "{text}".',
        'Your response must contain the words "{text}".',
        'Work the phrase "{text}" into your answer.',
        'Somewhere in your reply, use the phrase "{text}".',
    ),
    "no_word": (
        'Do not use the word "{w}".',
        'Avoid the word "{w}" entirely.',
        'Never write the word "{w}".',
        'The word "{w}" must not appear anywhere in your response.',
        'Do not say "{w}" at all.',
    ),
    "no_letter": (
        'Do not use the letter "{c}" anywhere.',
        "Avoid the letter {C} completely, in upper and lower case.",
        'Your response must not contain the letter "{c}".',
        'Write without using the letter "{c}".',
    ),
    "no_mark": (
        "Do not use any {plural}.",
        "Avoid {plural} entirely.",
        "Your response must not contain a single {singular}.",
        "Write without {plural}.",
    ),
    "startswith": (
        'Begin your response with "{text}".',
        'Start your answer with the words "{text}".',
        'Your first words must be "{text}".',
        'Open with "{text}".',
        'The response must start with "{text}".',
    ),
    "endswith": (
        'End your response with "{text}".',
        'Finish with the exact phrase "{text}".',
        'Your final words must be "{text}".',
        'Close with "{text}" and write nothing after it.',
        'The last words of your answer must be "{text}".',
    ),
    "bullet": (
        'Format your answer as exactly {n} bullet points, each starting with "- ".',
        'Give exactly {n} bullet points (start each line with "-" or "*").',
        "Present it as a bulleted list with exactly {n} items.",
        "Use a markdown bullet list of exactly {n} points.",
    ),
    "numbered": (
        "Format it as a numbered list with exactly {n} items (1., 2., 3., ...).",
        "Give exactly {n} numbered points, numbered from 1.",
        "Present your answer as a numbered list of exactly {n} items.",
    ),
    "numbered_start": (
        'Number the items starting from {n}, like "{k}. ...".',
        "Start the numbered list at {n}, not at 1.",
        "Use a numbered list whose first item is number {k}.",
    ),
    "table_rows": (
        "Present it as a markdown table with exactly {n} rows below the header.",
        "Use a markdown table with a header row and exactly {n} data rows.",
        "Format the answer as a table with {n} rows, not counting the header.",
    ),
    "json_keys": (
        "Return only a JSON object with the keys {keys}.",
        "Respond with a JSON object containing the keys {keys}.",
        "Output valid JSON: a single object that has the keys {keys}.",
    ),
    "json_keys_any": (
        "Respond with a JSON object that has at least one of the keys {keys}.",
        "Return a JSON object; it must include {keys} (one of them is enough).",
        "Output a JSON object containing at least one of {keys}.",
    ),
    "json_array_len": (
        "Return only a JSON array of exactly {n} strings.",
        "Respond with a JSON list containing exactly {n} items.",
        "Output a JSON array with exactly {n} elements and nothing else.",
    ),
    "is_upper": (
        "Write your entire response in capital letters.",
        "Use only uppercase letters (no lowercase letters at all).",
        "Your whole answer must be in ALL CAPS.",
        "Answer entirely in uppercase.",
    ),
    "is_lower": (
        "Write your entire response in lowercase letters, with no capitals at all.",
        "Use only lowercase letters.",
        "Do not use any capital letters.",
    ),
    "char_max": (
        "Keep the response to at most {n} characters.",
        "Use no more than {n} characters in total.",
        "The answer must be {n} characters or fewer, spaces included.",
    ),
}

# Punctuation a no_char check may forbid: (plural name, singular name).
MARKS: dict[str, tuple[str, str]] = {
    ",": ("commas", "comma"),
    ";": ("semicolons", "semicolon"),
    ":": ("colons", "colon"),
    "!": ("exclamation marks", "exclamation mark"),
    "?": ("question marks", "question mark"),
    "-": ("hyphens", "hyphen"),
    "'": ("apostrophes", "apostrophe"),
    "&": ("ampersands", "ampersand"),
}
# Letters a no_char check may forbid: rare enough that a natural answer can avoid them.
LETTERS: tuple[str, ...] = tuple("zqxjkvwybfgpmu")


def _lines(block: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in block.strip().splitlines() if line.strip())


# Required openings: no sentence terminator inside, so they never change a sentence count.
STARTS = _lines("""
Dear team,
Hi everyone,
Hello friends,
Good morning,
Quick update:
Here is the short version:
In short,
To start,
First of all,
Picture this:
Once upon a time
Imagine this
Let me explain
Here is what you need to know
As promised,
Welcome aboard,
Big news
Before we begin,
Thanks for reaching out,
It all started
Listen up
Fun fact:
My verdict:
Good evening,
To whom it may concern,
Dear neighbor,
Hey there
Breaking news:
Short answer:
Here is the plan
Honestly speaking,
Believe it or not,
On a bright Monday
For starters,
Dear friends
Summary:
Attention everyone
Let me be clear
Here we go
Hello from the committee,
""")

# Required closings. Those ending in . ! or ? can close a text with a sentence count; the rest
# (sign-offs) are only used where no sentence count is asked for.
ENDS = _lines("""
Thank you for reading.
Let me know if you have any questions.
See you soon!
What do you think?
Stay curious.
That is all for now.
Talk soon.
The end.
Any questions?
Have a wonderful week!
Onward and upward!
Thanks again.
I hope this helps.
Happy reading!
Now you know.
Until next time.
We can do this together.
Welcome to the family!
Enjoy every bite!
Safe travels!
Give it a try today.
Is that not worth a try?
Thanks for your patience.
Cheers to many more years!
Please reply by Friday.
Best regards, Jordan
Warm wishes
Yours truly, Sam
With gratitude
Stay tuned
""")

# Phrases a contains_norm check may require (case-insensitive).
PHRASES = _lines("""
free shipping
next Friday
customer feedback
step by step
in the long run
limited edition
open house
early bird discount
work-life balance
zero waste
peace of mind
room 214
by 5 pm
24 hours
fresh start
small steps
local farmers
the big picture
rainy days
a second chance
half price
pet friendly
gluten free
the first week
a warm welcome
hand in hand
on a budget
behind the scenes
clean energy
open source
the final draft
team spirit
morning routine
safety first
fun for all ages
no strings attached
made by hand
sign up today
three simple rules
at your own pace
last but not least
for the record
once a month
the main benefit
a short walk
best of both worlds
a tight deadline
the weekly meeting
Saturday morning
spare parts
""")

# Exact-case text a contains check may require (brand-like capitalisation).
CASED_TEXTS = _lines("""
ACME Labs
Project Falcon
GreenLeaf Studio
Route 66
NASA
iPhone
eBay
Version 3
Dr Rivera
Ms Okafor
Team Blue
Room B12
Harbor Street
Maple Avenue
SkyTrain
""")

# Words a word_times check counts: everyday words that fit any topic.
COUNT_WORDS = _lines("""
light
future
simple
team
water
green
home
time
value
growth
quality
together
bright
change
trust
focus
energy
balance
story
journey
city
music
garden
coffee
morning
friend
smart
fresh
local
community
safe
fun
hope
learn
plan
idea
dream
space
care
open
heart
step
kind
world
clean
night
river
book
color
weekend
""")

# Words a no_word check forbids: fillers and clichés a writer would reach for.
BANNED_WORDS = _lines("""
very
really
just
thing
things
stuff
basically
actually
amazing
literally
important
good
great
best
nice
awesome
obviously
definitely
totally
perfect
however
unique
innovative
crucial
delve
incredible
interesting
honestly
quickly
easy
""")

# The reference responder's neutral filler, in clauses so that its sentences start naturally.
# It shares no word with the banks above (a test checks), so filler never breaks a count or a ban.
FILLER_CLAUSES: tuple[str, ...] = (
    "clear steps help people stay calm and ready",
    "small daily habits add up over the months",
    "careful planning saves effort and money later",
    "regular reviews show what works and what does not",
    "each choice should match the goals set at the start",
    "the budget agreed with others sets the limits",
    "with patience most problems shrink",
    "progress becomes visible to all involved",
    "notes from earlier tries guide the next round",
    "a short list of tasks keeps attention sharp",
    "busy periods need rest as much as work",
    "everyone involved can share questions and concerns",
    "the whole effort feels steady and rewarding",
    "practical advice works better than long theory",
    "a calm start makes the rest much smoother",
)
FILLER: tuple[str, ...] = tuple(word for clause in FILLER_CLAUSES for word in clause.split())
