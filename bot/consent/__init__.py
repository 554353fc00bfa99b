"""Consent: what leaves a member's agent, who approved it, and what each person may see of it afterwards.

The map, in the order a text leaves an agent:

- `outgoing`: what one turn passes on (`Outgoing`: words, facts, answer, the memory lines they rest on) and how a
  memory line reads to a person (its text and where it comes from, never its id).
- `outbox`: the one way out. `Outbox.send` reads the member's policy at the moment of sending, runs the steps below,
  and records what left, to whom and under which policy (`Sent`, its `Audience`); `Verdict` says whether it left.
- `exclusions`: a channel the member kept out of memory mid-ask is forgotten before anything else leaves.
- `screen`: the share screen decides in code what may leave in one turn (facts tied to the question, quoted memory
  only as cited evidence, a per-ask quoting budget).
- `paraphrase`: the part of the screen that cuts a sentence naming the rare terms of a line it may not pass on.
- `owners`: whose words a text carries (a colleague's relayed words, a DM partner's lines), so each owner's policy
  decides again for anyone new.
- `approval`: asking an `ask` member to approve one exact text (`SharingGate`); no answer in time is a refusal.
- `card`, `card_facts`: what that member reads (`ApprovalCard`, one typed view every surface renders): the text
  once, its sources as readable references, names, the deadline in the member's time zone (else the workspace's).
- `prompt_limits`: how often one member's asks may prompt one colleague.
- `pending`: approvals waiting for a click: the stored decision (`ApprovalStore`, what asks rely on) and each
  platform's in-process registry of its prompts (`ApprovalRegistry`); surfaces deliver clicks here.

What one person may see of an ask afterwards (`AskView`) is built from the outbox's records by the read models
(`bot.asks.read_models.ask_view`); every page and text about an ask is rendered from it, never from the stored turns.

Agents reach consent through `outbox` alone; the ask service wires the screen, gate, limits and store into each
ask's outboxes; surfaces render from the read models and hand clicks to `pending`.
`tests/unit/consent/test_consent_layers.py` holds those lines (and that nothing here imports a platform library or a
surface).

    gate = SharingGate(port, ask_id=7, question=q, requester="alice", timeout_s=600, approvals=ApprovalStore(db))
    outbox = Outbox(roster, gate, screen=ShareScreen(cap=2000), audience=Audience("alice", ("bob",), "#general"))
    verdict = await outbox.send(agent, step, turns, conversation_id=1)  # Verdict.SENT | HELD | NOTHING
"""
