"""The scripted stand-in model: answers the agents' prompts by reading them (no network, no weights), for tests,
the benchmark's `--scripted` runs and offline demos. `model.scripted_model` is the reply function a `ScriptedBackend`
plays; `reading` finds what a prompt asks and what its memory lines say.
"""
