"""Needle personas: a category, items of it, and sentences that state liking or disliking one item.

Each person states two items with the same polarity (the needle item and a decoy), so the answer needs both
conversations: only the needle item is liked (or disliked) by both sides as the question asks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    noun: str  # "fantasy book series"
    items: tuple[str, ...]


CATEGORIES: tuple[Category, ...] = (
    Category(
        "fantasy book series",
        ("The Wheel of Time", "The Stormlight Archive", "Discworld", "Earthsea", "The Broken Earth trilogy"),
    ),
    Category("board game", ("Settlers of Catan", "Ticket to Ride", "Carcassonne", "Wingspan", "Azul")),
    Category("cuisine", ("Ethiopian food", "Peruvian food", "Sichuan cooking", "Georgian cuisine", "Lebanese food")),
    Category("water sport", ("kayaking", "paddleboarding", "scuba diving", "windsurfing", "white-water rafting")),
    Category("musical instrument", ("the cello", "the banjo", "the ukulele", "the harmonica", "the accordion")),
    Category("TV series", ("Twin Peaks", "Doctor Who", "The Great British Bake Off", "Battlestar Galactica", "Fargo")),
    Category("travel destination", ("Lisbon", "Kyoto", "Reykjavik", "Buenos Aires", "Marrakesh")),
    Category("dance style", ("salsa", "tango", "swing dancing", "flamenco", "Irish step dancing")),
    Category("craft hobby", ("woodworking", "pottery", "calligraphy", "bookbinding", "origami")),
    Category("kind of tea", ("oolong tea", "matcha", "rooibos", "Earl Grey", "chai")),
)

LIKES = (
    "By the way, {item} is my favourite {category} these days.",
    "I've recently gotten really into {item}, such a great {category}.",
    "Honestly, no {category} beats {item} for me.",
    "Lately I can't get enough of {item}; it's the {category} I love most.",
)
DISLIKES = (
    "I have to admit I can't stand {item}; it's one {category} I just don't enjoy.",
    "People keep recommending {item}, but I really dislike that {category}.",
    "{Item} is a {category} I've never liked, to be honest.",
    "Don't get me started on {item}, a {category} I really can't stand.",
)

QUESTIONS = {
    "common": "What {category} do Alice and Dave both enjoy?",
    "alice_likes": "What {category} does Alice enjoy that Dave dislikes?",
    "dave_likes": "What {category} does Dave enjoy that Alice dislikes?",
}
KINDS = tuple(QUESTIONS)  # "common" = shared persona; the other two = contrasting personas


def polarity(kind: str, person: str) -> bool:
    """Whether `person` ("alice" or "dave") likes the needle item in an item of this kind."""
    if kind == "common":
        return True
    return (kind == "alice_likes") == (person == "alice")


def sentence(template: str, item: str, category: str) -> str:
    return template.format(item=item, Item=item[0].upper() + item[1:], category=category)
