"""FriendsTV's markers of a named person, and the scene anchor of template questions (no answer given away)."""

from __future__ import annotations

from bot.bench.friendstv.anchor import SceneInfo, scene_anchor
from bot.bench.friendstv.people import is_named, word_casing


LINES = [
    "I'm going out with Paul tonight.",
    "Hey, Lowell.",
    "Thank you, Mr. Heckles.",
    "The nurse said so. Nurse!",
    "Guys, guys, listen to the guy.",
    "It's on TV, the tv guide said so.",
    "Assistant to the what? (Marcel screeches)",
]


def test_a_name_is_a_proper_noun_of_the_transcript() -> None:
    lower, proper = word_casing(LINES)
    labels = ("Paul", "Lowell", "Mr. Heckles", "Nurse", "Guys", "Pizza Guy", "TV", "Phoebe's Assistant", "Marcel")
    named = {label: is_named(label, lower, proper) for label in labels}
    assert named == {
        "Paul": True, "Lowell": True, "Mr. Heckles": True,  # mid-sentence, after a comma, after a title
        "Nurse": False, "Guys": False, "Pizza Guy": False, "TV": False,  # written in lower case somewhere
        "Phoebe's Assistant": False,  # a possessive is a relation, and "Assistant" only starts a sentence
        "Marcel": False,  # a stage direction is not a spoken line
    }  # fmt: skip


INFO = SceneInfo(8, "The One Where Nana Dies Twice", "Monica and Rachel's")


def test_the_anchor_names_the_scene_but_leaves_out_what_holds_an_answer() -> None:
    speakers = ["Chandler Bing", "Joey Tribbiani", "Mrs. Geller"]
    full = scene_anchor(INFO, speakers, ["at work"])
    assert full == (
        'In season 1, episode 8 ("The One Where Nana Dies Twice"), in the scene at Monica and Rachel\'s where '
        "Chandler, Joey and Mrs. Geller speak"
    )
    hidden = scene_anchor(INFO, speakers, ["Nana", "Joey Tribbiani", "at Monica and Rachel's"])
    assert hidden == "In season 1, episode 8, in the scene where Chandler and Mrs. Geller speak"
    only_when = scene_anchor(INFO, ["Joey Tribbiani"], ["Joey", "Rachel"])  # "Rachel's" holds "Rachel"
    assert only_when == 'In season 1, episode 8 ("The One Where Nana Dies Twice"), in one scene'
