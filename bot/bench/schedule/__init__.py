"""Schedule Easy / Medium / Hard (appendix D.2): schedules by algorithm, dialogues rendered from them."""
