"""The shipped PREF demo: hand-written preference pairs where the chosen answer is clearly better.

Written in the schema of `HuggingFaceH4/ultrafeedback_binarized` (`prompt` a string, `chosen`
and `rejected` the full conversations as message lists), so the demo file exercises the same
loader path as the real held-out split.
"""

from __future__ import annotations

from typing import Any

# (prompt, chosen answer, rejected answer): the rejected one is wrong, unhelpful, rude or
# ignores the request.
PAIRS: tuple[tuple[str, str, str], ...] = (
    ("What is the boiling point of water at sea level in Celsius?",
     "Water boils at 100 °C at sea level.",
     "Water boils at 50 °C at sea level."),
    ("Translate 'good morning' into Spanish.",
     "'Good morning' in Spanish is 'buenos días'.",
     "I don't really do translations, try a dictionary."),
    ("Give me a tip for remembering people's names.",
     "Repeat the name once in conversation right after you hear it, for example 'Nice to meet "
     "you, Dana', and link it to something about the person.",
     "Names are hard. Some people are just bad at them."),
    ("What is 12 times 12?", "12 × 12 = 144.", "12 × 12 = 124."),
    ("Write a haiku about autumn.",
     "Red leaves drift and fall\nthe cold wind counts them softly\nbranches learn to rest",
     "Autumn is a season that comes after summer and before winter."),
    ("Who painted the Mona Lisa?",
     "The Mona Lisa was painted by Leonardo da Vinci in the early 16th century.",
     "The Mona Lisa was painted by Vincent van Gogh."),
    ("How do I reverse a list in Python?",
     "Use `my_list.reverse()` to reverse it in place, or `my_list[::-1]` to get a reversed copy.",
     "Python lists cannot be reversed; you have to write them again in the other order."),
    ("Suggest a name for a friendly golden retriever.",
     "How about 'Sunny'? It suits a cheerful golden coat and is easy to call out at the park.",
     "Dog."),
    ("What causes the seasons on Earth?",
     "The seasons come from the tilt of Earth's axis (about 23.5°): as Earth orbits the Sun, each "
     "hemisphere is tilted towards the Sun for part of the year and away for the other part.",
     "The seasons happen because Earth is much closer to the Sun in summer."),
    ("Can you summarise the plot of Romeo and Juliet in one sentence?",
     "Two young lovers from feuding families in Verona marry in secret, and a chain of "
     "misunderstandings ends in both of their deaths, which finally reconciles the families.",
     "It is a play by Shakespeare."),
    ("I burned my finger on the stove. What should I do?",
     "Hold it under cool (not icy) running water for about 20 minutes, remove any rings, and cover "
     "it loosely with a clean non-fluffy dressing. See a doctor if it is large, blistering badly "
     "or on a child.",
     "Put butter on it and it will be fine."),
    ("What's the difference between weather and climate?",
     "Weather is the state of the atmosphere over hours or days; climate is the average pattern "
     "of weather in a place over decades.",
     "There is no difference, they are two words for the same thing."),
    ("Recommend a book for someone who wants to learn about habits.",
     "'Atomic Habits' by James Clear is a practical, readable introduction to building good "
     "habits and breaking bad ones.",
     "Read any book, they are all the same."),
    ("How many continents are there?",
     "By the most common convention there are seven continents: Africa, Antarctica, Asia, "
     "Australia (Oceania), Europe, North America and South America.",
     "There are three continents."),
    ("Write a polite reply declining a meeting invitation.",
     "Thank you for the invitation. Unfortunately I can't attend on Thursday, but I'd be happy to "
     "catch up afterwards or read the notes.",
     "No."),
    ("Explain what a noun is to a child.",
     "A noun is a word for a person, a place or a thing, like 'teacher', 'park' or 'ball'.",
     "A noun is a lexical category of the syntactic head of a determiner phrase."),
    ("Convert 5 kilometres to miles.",
     "5 km is about 3.11 miles (1 km ≈ 0.621 miles).",
     "5 km is 8 miles."),
    ("What should I pack for a day hike?",
     "Water, snacks, a map or offline phone map, sun protection, a light rain layer, a small first "
     "aid kit and a charged phone.",
     "Nothing, hiking is easy."),
    ("Is a tomato a fruit or a vegetable?",
     "Botanically a tomato is a fruit (it develops from the flower and contains seeds), though it "
     "is usually cooked and served as a vegetable.",
     "A tomato is a type of nut."),
    ("Fix the grammar: 'She don't like apples.'",
     "She doesn't like apples.",
     "She don't likes apples."),
    ("Give me a synonym for 'happy'.",
     "'Joyful' is a good synonym for 'happy'.",
     "'Sad' is a synonym for 'happy'."),
    ("How can I save energy at home?",
     "Switch to LED bulbs, lower the thermostat by a degree, seal draughts around doors and "
     "windows, and turn devices fully off instead of leaving them on standby.",
     "You can't really save energy at home."),
    ("What is the capital of Canada?", "The capital of Canada is Ottawa.",
     "The capital of Canada is Toronto."),
    ("Write a short, encouraging message for a friend starting a new job.",
     "Congratulations on the new job! They're lucky to have you. Enjoy the first weeks, ask lots "
     "of questions, and don't forget to celebrate.",
     "New jobs are usually stressful and most people regret switching."),
    ("Why do we need sleep?",
     "Sleep lets the body repair tissue and lets the brain consolidate memories and clear waste "
     "products; without enough of it, attention, mood and health suffer.",
     "We don't really need sleep; it is just a habit."),
    ("List the primary colours of paint.",
     "The traditional primary colours of paint are red, yellow and blue.",
     "Green, purple and orange."),
    ("How do I make a cup of green tea?",
     "Heat water to about 75-80 °C (not boiling), pour it over a teaspoon of leaves or a tea bag "
     "and steep for 2-3 minutes before removing the leaves.",
     "Boil the tea bag in water for 20 minutes."),
    ("What does CPU stand for?", "CPU stands for central processing unit.",
     "CPU stands for computer power unit."),
    ("Can you help me write a subject line for a team newsletter?",
     "Sure: 'This Month at Team North: Wins, Welcomes and What's Next'.",
     "Newsletter."),
    ("What's a healthy breakfast idea?",
     "Oatmeal with berries and a spoonful of nuts or yoghurt gives fibre, protein and lasting "
     "energy.",
     "A can of soda and some candy."),
)  # fmt: skip


def pref_demo_rows() -> list[dict[str, Any]]:
    """The demo pairs as rows of the UltraFeedback schema."""
    rows = []
    for prompt, chosen, rejected in PAIRS:
        user = {"role": "user", "content": prompt}
        rows.append(
            {
                "prompt": prompt,
                "chosen": [user, {"role": "assistant", "content": chosen}],
                "rejected": [user, {"role": "assistant", "content": rejected}],
            }
        )
    return rows
