"""Read models: what people read of asks, negotiations, memory and bench runs, as plain views built from the records
the gate (`bot.consent.outbox`) and the stores kept. Surfaces (the web app, Slack, Discord, the CLI) render these
views as they are; none of them reads the stored turns itself.

The audience rule: each view is built for one audience, the asker, a member or an admin, from the gate's records
only. What an agent let out is in a view only when its outbox record named that audience; an agent's internals
(plan, searches, prompts, errors) are its own member's, and an admin's only with raw prompt access.

- `transcripts`: the stored ask, whole, for no one audience; `ask_view.view_for` is how people read it.
- `ask_view`: what one person may see of an ask (`AskView`); every view of an ask below is built from it.
- `answer_view`, `contributions`: an ask's answer, its sources and what each colleague's agent added, for one viewer.
- `transcript_page`, `hits`, `redaction`: the transcript page, its memory hits resolved and redacted per viewer.
- `live_ask`, `dm_answers`: an ask while it runs and once answered, for its asker (and admins).
- `member_views`, `member_page`: a member's own recent asks and what their agent shared.
- `ask_summaries`, `negotiations`, `ingestion`, `bench_reports`: lists for a member's pages and admins' pages.
- `jsonable`: a view as a JSON body, field for field.

    view = view_for(await load_transcript(db, ask_id), await viewer_of(db, workspace_id, "carol"))  # carol's AskView
    answer = await answer_view(db, ask_id, viewer="carol", settings=settings, workspace_id=workspace_id)
"""
