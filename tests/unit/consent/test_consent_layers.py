"""Layer rules of consent (`bot.consent`): agents reach it through the outbox alone, only the wiring and the surfaces
that deliver clicks touch the approval machinery, it imports no platform or surface, and what people read of an ask
is rendered from their `AskView` (`bot.asks.read_models.ask_view`, built from the outbox's records), never from the
stored turns.

Every import counts, including those inside functions and under TYPE_CHECKING, relative ones and
`importlib.import_module("...")` with a literal name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


ROOT = Path(__file__).parents[3]
CONSENT = "bot.consent"
# The package's face: the one way out of an agent, the plain record of what a turn passes on, and the approval card
# a member reads (a plain record every surface renders). Every other module of bot/consent (approval, pending,
# prompt_limits, owners, screen, paraphrase, exclusions, card_facts, and any added later) is machinery the outbox runs.
PUBLIC = {"bot.consent.outbox", "bot.consent.outgoing", "bot.consent.card"}
# Who outside bot/consent may import which piece of the machinery, and why.
MACHINERY_USERS = {
    # the application wiring: builds each ask's outbox from its screen, gate (with what its cards name people and
    # places by), prompt limits and approval store
    "bot/asks/service.py": {
        "bot.consent.approval", "bot.consent.pending", "bot.consent.prompt_limits", "bot.consent.screen",
        "bot.consent.card_facts",
    },
    # cancelling an ask closes its approvals still pending
    "bot/asks/control.py": {"bot.consent.pending"},
    # a trade's Accept / Decline is stored like an ask's approvals
    "bot/negotiation/confirmation.py": {"bot.consent.pending"},
    # surfaces delivering button clicks (and posting the prompts they answer) into the pending registry and store
    "bot/web/routes/workspace.py": {"bot.consent.pending"},
    "adapters/slack/port.py": {"bot.consent.pending"},
    "adapters/slack/listeners/actions/approval.py": {"bot.consent.pending"},
    "adapters/discord/port.py": {"bot.consent.pending"},
    "adapters/discord/guilds.py": {"bot.consent.pending"},
    "adapters/discord/views/approval.py": {"bot.consent.pending"},
}  # fmt: skip
# What bot/consent may not import: platforms, adapters, surfaces and entry points, and the parts of the core that
# import consent themselves (of bot.asks only the stored records, `models` and `approval_rows`, are below it).
BELOW_CONSENT_IN_ASKS = {"bot.asks.models", "bot.asks.approval_rows"}
FORBIDDEN_IN_CONSENT = (
    "slack_bolt", "slack_sdk", "discord", "adapters", "starlette",
    "bot.web", "bot.cli", "bot.serve", "bot.bench", "bot.negotiation", "bot.__main__",
)  # fmt: skip

RECORD_MODULE = "bot.asks.read_models.transcripts"
STORED = {"Turn", "Consensus", "MemoryQuery"}  # bot.asks.models rows holding agents' internals
# Readers of the stored ask: the view itself and the modules that pass what they load to it; the writers and the
# runner of asks; the member's own sharing log (their own agent's turns); operators' figures (bench, metrics); a
# follow-up's background, which keeps an earlier answer only for readers every outbox record of it named.
READERS = {
    "bot/asks/read_models/ask_view.py", "bot/asks/read_models/answer_view.py",
    "bot/asks/read_models/transcript_page.py", "bot/cli/transcript_view.py", "bot/cli/transcripts.py",
    "bot/cli/ask.py", "bot/asks/read_models/transcripts.py", "bot/asks/metrics.py", "bot/bench/runner.py",
    "bot/bench/citations.py", "bot/asks/service.py", "bot/asks/record.py", "bot/asks/live_record.py",
    "bot/asks/delivery.py", "bot/asks/read_models/member_views.py", "bot/asks/background.py",
}  # fmt: skip


def _sources() -> list[Path]:
    return sorted([*ROOT.joinpath("bot").rglob("*.py"), *ROOT.joinpath("adapters").rglob("*.py")])


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _package_of(path: Path) -> str:
    """The dotted package a file's relative imports start from."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1])


def _within(name: str, modules: Iterable[str]) -> bool:
    return any(name == m or name.startswith(f"{m}.") for m in modules)


def _imported_modules(path: Path, tree: ast.AST) -> set[str]:
    """Every dotted name a file imports: modules, and `module.name` for each name taken from a module (so
    `from bot.consent import approval` counts as `bot.consent.approval`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(path).split(".")
                anchor = ".".join(package[: len(package) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def _machinery() -> set[str]:
    package = ROOT / "bot" / "consent"
    modules = {f"{CONSENT}.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"}
    return modules - PUBLIC


def _machinery_imported(path: Path) -> set[str]:
    imported = _imported_modules(path, ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in _machinery() if any(_within(name, [m]) for name in imported)}


def test_only_consent_the_wiring_and_click_surfaces_import_the_approval_machinery() -> None:
    offenders = {}
    for path in _sources():
        if _name(path).startswith("bot/consent/"):
            continue
        extra = _machinery_imported(path) - MACHINERY_USERS.get(_name(path), set())
        if extra:
            offenders[_name(path)] = sorted(extra)
    assert offenders == {}, "reach consent through bot.consent.outbox (or add a commented entry to MACHINERY_USERS)"


def test_the_allowlist_names_only_what_is_used() -> None:
    # a user that stopped importing a piece of the machinery leaves the list, so the list never grows stale
    stale = {}
    for name, allowed in MACHINERY_USERS.items():
        path = ROOT / name
        unused = allowed - (_machinery_imported(path) if path.exists() else set())
        if unused:
            stale[name] = sorted(unused)
    assert stale == {}


def test_the_machinery_is_every_module_of_consent_but_its_face() -> None:
    expected = {"approval", "pending", "prompt_limits", "owners", "screen", "paraphrase", "exclusions"}
    assert _machinery() >= {f"{CONSENT}.{m}" for m in expected}  # and any module added later


def test_consent_imports_no_platform_surface_or_what_sits_above_it() -> None:
    offenders = {}
    for path in sorted(ROOT.joinpath("bot", "consent").rglob("*.py")):
        imported = _imported_modules(path, ast.parse(path.read_text(encoding="utf-8")))
        bad = {
            name
            for name in imported
            if _within(name, FORBIDDEN_IN_CONSENT)
            or (name.startswith("bot.asks.") and not _within(name, BELOW_CONSENT_IN_ASKS))
        }
        if bad:
            offenders[_name(path)] = sorted(bad)
    assert offenders == {}


def _reads_the_record(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == RECORD_MODULE:
            found.append(f"imports {RECORD_MODULE}")
        elif isinstance(node, ast.ImportFrom) and any(f"{node.module}.{a.name}" == RECORD_MODULE for a in node.names):
            found.append(f"imports {RECORD_MODULE}")
        elif isinstance(node, ast.ImportFrom) and node.module == "bot.asks.models":
            found += [f"imports models.{a.name}" for a in node.names if a.name in STORED]
        elif isinstance(node, ast.Attribute) and node.attr in STORED and isinstance(node.value, ast.Name):
            if node.value.id == "models":
                found.append(f"reads models.{node.attr}")
    return found


def test_only_the_view_and_its_loaders_read_stored_asks() -> None:
    offenders = {}
    for path in _sources():
        name = _name(path)
        if name in READERS or name.startswith(("bot/store/", "bot/asks/models")):
            continue
        if found := _reads_the_record(ast.parse(path.read_text(encoding="utf-8"))):
            offenders[name] = sorted(set(found))
    assert offenders == {}, "render from bot.asks.read_models.ask_view.view_for instead"


def test_the_loaders_hand_what_they_load_to_the_view() -> None:
    loaders = ("bot/asks/read_models/answer_view.py", "bot/asks/read_models/transcript_page.py")
    for name in (*loaders, "bot/cli/transcript_view.py"):
        assert "view_for(" in ROOT.joinpath(name).read_text(encoding="utf-8"), name
