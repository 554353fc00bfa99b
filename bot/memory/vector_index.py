"""The vector index of fuzzy memory: one Chroma collection per workspace, one vector per session summary.

    index = VectorIndex.from_settings(settings)                 # embedded Chroma, or a server by setting
    await index.upsert(workspace_id, [VectorDoc(key, summary, channel_id)])
    matches = await index.query(workspace_id, "who moves to Paris?", channel_ids=[3, 7], top_k=5)

Embedded `PersistentClient` under `ASKWITH_DATA_DIR/chroma` by default; `HttpClient` when `ASKWITH_CHROMA_HOST` is
set (`bot.memory.chroma_server`: while the server cannot be reached, calls raise `MemoryUnavailableError`). Every
collection gets an explicit offline embedding function (Chroma's default one downloads a model) and explicit HNSW
parameters. Chroma's client is blocking, so every call runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings as ChromaSettings

from bot.memory.chroma_server import ChromaServer
from bot.memory.embeddings import embedder_from_settings
from bot.memory.vector_cache import ChannelVectors, VectorCache
from bot.memory.vector_keys import VectorKeys
from bot.settings import Settings


T = TypeVar("T")

# Chroma's defaults (ef_construction 100, ef_search 100, 16 neighbours) missed an obvious top hit among 1,000
# near-identical texts. A wider build and search beam costs little at one vector per session.
HNSW = {"space": "cosine", "ef_construction": 512, "ef_search": 512, "max_neighbors": 48}


@dataclass(frozen=True)
class VectorDoc:
    key: str  # the vector's id: a session key (summaries) or a window key (message windows)
    text: str  # what is embedded: the session summary, or a window's lines
    channel_id: int  # database id, for viewer filtering
    session_key: str = ""  # windows: the session they belong to (they go when it goes)
    message_ids: str = ""  # windows: database ids of their messages, comma-separated


@dataclass(frozen=True)
class VectorMatch:
    key: str
    score: float  # cosine similarity, higher is better
    message_ids: tuple[int, ...] = ()  # windows: their messages


QUERY_CACHE_SIZE = 512  # recent query texts whose vectors are kept (one MiniLM embedding costs milliseconds)
MESSAGE_IDS_KEPT = 50_000  # windows whose message ids are kept once read (a window's ids never change)


class QueryVectors:
    """An LRU cache of query vectors, shared by sibling indexes (an agent's question is embedded once for the
    summaries and the windows, and a repeated question not at all)."""

    def __init__(self, embedder: EmbeddingFunction[Documents], size: int = QUERY_CACHE_SIZE) -> None:
        self.embedder = embedder
        self.size = size
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def vector(self, text: str) -> Any:
        with self._lock:
            if text in self._vectors:
                self._vectors.move_to_end(text)
                return self._vectors[text]
        vector = self.embedder([text])[0]  # outside the lock: embedding is the slow part
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return vector


class VectorIndex:
    def __init__(
        self,
        connect: Any,  # () -> ClientAPI, called once, in a worker thread: connecting blocks
        embedder: EmbeddingFunction[Documents],
        *,
        prefix: str = "askwith",  # collection names are "<prefix>-ws<workspace id>"
        query_vectors: QueryVectors | None = None,  # a sibling's cache (same embedder)
        cache: VectorCache | None = None,  # vectors kept in memory for exact scoped search (None: Chroma only)
        of_windows: bool = False,  # message windows: each match carries its messages' ids
        server: ChromaServer | None = None,  # the Chroma server `connect` reaches (None: embedded Chroma)
    ) -> None:
        self.server = server
        self.query_vectors = query_vectors or QueryVectors(embedder)
        self.cache = cache
        self.of_windows = of_windows
        self._message_ids: OrderedDict[str, tuple[int, ...]] = OrderedDict()  # window key -> ids, once read
        self._connect = connect
        self._client: ClientAPI | None = None
        self.embedder = embedder
        self.prefix = prefix
        self._collections: dict[int, Collection] = {}
        self._lock = threading.Lock()
        self._windows: VectorIndex | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, embedder: EmbeddingFunction[Documents] | None = None) -> VectorIndex:
        embedder = embedder_from_settings(settings) if embedder is None else embedder
        quiet = ChromaSettings(anonymized_telemetry=False)  # no phoning home from an offline machine
        cache = VectorCache(settings.vector_cache) if settings.vector_cache > 0 else None
        if settings.chroma_host:
            server = ChromaServer(settings.chroma_host, settings.chroma_port, quiet)
            return cls(server.connect, embedder, prefix=settings.chroma_prefix, cache=cache, server=server)
        path = settings.data_dir / "chroma"
        return cls(
            lambda: chromadb.PersistentClient(path=path, settings=quiet),
            embedder,
            prefix=settings.chroma_prefix,
            cache=cache,
        )

    def windows(self) -> VectorIndex:
        """The sibling index of message windows (hybrid retrieval's dense side): same client, same embedder,
        collections "<prefix>-windows-ws<workspace id>"."""
        if self._windows is None:
            self._windows = VectorIndex(
                self._shared_client,
                self.embedder,
                prefix=f"{self.prefix}-windows",
                query_vectors=self.query_vectors,
                cache=self.cache,  # one bound for both (entries are told apart by index name)
                of_windows=True,
                server=self.server,
            )
        return self._windows

    # ------------------------------------------------------------------ async API
    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """The vectors this index's embedding function gives `texts` (for callers that embed ahead of upserting)."""
        return await asyncio.to_thread(self.embedder, list(texts)) if texts else []

    async def upsert(self, workspace_id: int, docs: Sequence[VectorDoc], *, vectors: Embeddings | None = None) -> None:
        """Insert or replace documents by key; `vectors` (from `embed`) spares embedding them again."""
        if docs:
            await self._off_thread(self._upsert, workspace_id, docs, vectors)

    async def delete(self, workspace_id: int, keys: Sequence[str]) -> None:
        if keys:
            await self._off_thread(lambda: self._collection(workspace_id).delete(ids=list(keys)))

    async def delete_sessions(self, workspace_id: int, session_keys: Sequence[str]) -> None:
        """Drop the windows of these sessions."""
        for start in range(0, len(session_keys), 500):
            batch = list(session_keys[start : start + 500])
            where = {"session_key": {"$in": batch}}
            await self._off_thread(lambda where=where: self._collection(workspace_id).delete(where=where))

    async def query(
        self,
        workspace_id: int,
        text: str,
        *,
        channel_ids: Sequence[int] | Mapping[int, int],
        top_k: int,
        keys: VectorKeys | None = None,
    ) -> list[VectorMatch]:
        """The `top_k` nearest documents among the given channels only (none given finds nothing). Channels given
        with their memory versions (`visible_channel_versions`) are searched exactly in memory when they fit the
        cache; otherwise, and for a plain list of ids, Chroma's index is asked with a channel filter. `keys` tells
        the keys of the channels the cache must read (`vector_keys`): they are read by key, the rest by filter."""
        if not channel_ids or top_k < 1:
            return []
        known: dict[int, list[str] | None] = {}
        if keys is not None and self.cache is not None and isinstance(channel_ids, Mapping):
            if stale := self.cache.stale((self.prefix, workspace_id), channel_ids):
                known = await keys(stale)
        return await self._off_thread(self._query, workspace_id, text, channel_ids, top_k, known)

    async def count(self, workspace_id: int) -> int:
        """Vectors held for the workspace; 0 for one that has none, without creating its collection (`askwith
        status` counts every workspace and must not leave empty collections behind)."""
        return await self._off_thread(self._count, workspace_id)

    async def keys(self, workspace_id: int) -> set[str]:
        return await self._off_thread(lambda: set(self._collection(workspace_id).get(include=[])["ids"]))

    async def drop_workspace(self, workspace_id: int) -> None:
        await self._off_thread(self._drop, workspace_id)

    async def _off_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """A blocking Chroma call in a worker thread; a server's network failure is MemoryUnavailableError."""
        if self.server is None:
            return await asyncio.to_thread(fn, *args)
        return await self.server.call(fn, *args)

    # ------------------------------------------------------------------ blocking work (worker threads)
    def _name(self, workspace_id: int) -> str:
        return f"{self.prefix}-ws{workspace_id}"

    def _shared_client(self) -> ClientAPI:
        with self._lock:
            return self._connected()

    def _connected(self) -> ClientAPI:
        # Called with self._lock held.
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _collection(self, workspace_id: int) -> Collection:
        with self._lock:
            if workspace_id not in self._collections:
                self._collections[workspace_id] = self._connected().get_or_create_collection(
                    self._name(workspace_id),
                    configuration={"hnsw": dict(HNSW)},  # type: ignore[typeddict-item]
                    embedding_function=self.embedder,
                )
            return self._collections[workspace_id]

    def _upsert(self, workspace_id: int, docs: Sequence[VectorDoc], vectors: Embeddings | None) -> None:
        self._collection(workspace_id).upsert(
            ids=[d.key for d in docs],
            embeddings=vectors,  # None: the collection's embedding function embeds the documents
            documents=[d.text for d in docs],
            metadatas=[_metadata(d) for d in docs],
        )

    def _query(
        self,
        workspace_id: int,
        text: str,
        channels: Sequence[int] | Mapping[int, int],
        top_k: int,
        known: Mapping[int, list[str] | None],
    ) -> list[VectorMatch]:
        vector = self.query_vectors.vector(text)
        if self.cache is not None and isinstance(channels, Mapping):
            read = lambda ids: self._channel_vectors(workspace_id, ids, known)  # noqa: E731
            found = self.cache.nearest((self.prefix, workspace_id), vector, channels, top_k, read=read)
            if found is not None:
                return self._with_message_ids(workspace_id, found)
        result = self._collection(workspace_id).query(
            query_embeddings=[vector],
            n_results=top_k,
            where=_in_channels(list(channels)),
            include=["distances", "metadatas"],
        )
        ids, distances = result["ids"][0], (result["distances"] or [[]])[0]
        metadatas = (result["metadatas"] or [[{}] * len(ids)])[0]
        # Cosine space: distance = 1 - cosine similarity.
        return [
            VectorMatch(key, 1.0 - float(d), _message_ids(meta))
            for key, d, meta in zip(ids, distances, metadatas, strict=True)
        ]

    def _channel_vectors(
        self, workspace_id: int, channel_ids: list[int], known: Mapping[int, list[str] | None]
    ) -> dict[int, ChannelVectors]:
        """Every vector of these channels, by channel (channels without any get an empty entry): by key where the
        keys are `known` (the vectors alone: a window's message ids are read for the few that match, and kept), by
        a filter on the channel otherwise."""
        rows: dict[int, list[tuple[str, tuple[int, ...] | None, Any]]] = {id_: [] for id_ in channel_ids}
        channel_of = {key: id_ for id_ in channel_ids for key in known.get(id_) or ()}
        by_key = list(channel_of)
        for at in range(0, len(by_key), 1000):
            got = self._collection(workspace_id).get(ids=by_key[at : at + 1000], include=["embeddings"])
            vectors = got["embeddings"] if got["embeddings"] is not None else []
            for key, vector in zip(got["ids"], vectors, strict=True):
                rows[channel_of[key]].append((key, None if self.of_windows else (), vector))
        by_filter = [id_ for id_ in channel_ids if known.get(id_) is None]
        for at in range(0, len(by_filter), 500):
            where = _in_channels(by_filter[at : at + 500])
            got = self._collection(workspace_id).get(where=where, include=["embeddings", "metadatas"])
            vectors = got["embeddings"] if got["embeddings"] is not None else []
            for key, meta, vector in zip(got["ids"], got["metadatas"] or [], vectors, strict=True):
                if (channel := rows.get(int(meta["channel_id"]))) is not None:  # only the channels asked for
                    channel.append((key, _message_ids(meta), vector))
        return {
            id_: ChannelVectors.of([r[0] for r in found], [r[1] for r in found], [r[2] for r in found])
            for id_, found in rows.items()
        }

    def _with_message_ids(
        self, workspace_id: int, found: list[tuple[str, float, tuple[int, ...] | None]]
    ) -> list[VectorMatch]:
        """Matches of the cache; those whose message ids were not read with their vectors get them (read once,
        then kept). A match gone from the index meanwhile is left out."""
        unread = [key for key, _, ids in found if ids is None and key not in self._message_ids]
        if unread:
            got = self._collection(workspace_id).get(ids=unread, include=["metadatas"])
            with self._lock:
                for key, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                    self._message_ids[key] = _message_ids(meta)
                while len(self._message_ids) > MESSAGE_IDS_KEPT:
                    self._message_ids.popitem(last=False)
        matches = []
        for key, score, ids in found:
            if ids is None:
                ids = self._message_ids.get(key)
            if ids is not None:
                matches.append(VectorMatch(key, score, ids))
        return matches

    def _drop(self, workspace_id: int) -> None:
        with self._lock:
            self._collections.pop(workspace_id, None)
            if self._exists(workspace_id):
                self._connected().delete_collection(self._name(workspace_id))

    def _count(self, workspace_id: int) -> int:
        with self._lock:
            if workspace_id not in self._collections and not self._exists(workspace_id):
                return 0
        return self._collection(workspace_id).count()

    def _exists(self, workspace_id: int) -> bool:
        # Called with self._lock held.
        return self._name(workspace_id) in {c.name for c in self._connected().list_collections()}


def _metadata(doc: VectorDoc) -> dict[str, Any]:
    meta: dict[str, Any] = {"channel_id": doc.channel_id}
    if doc.session_key:
        meta |= {"session_key": doc.session_key, "message_ids": doc.message_ids}
    return meta


def _in_channels(channel_ids: list[int]) -> dict[str, Any]:
    return {"channel_id": channel_ids[0]} if len(channel_ids) == 1 else {"channel_id": {"$in": channel_ids}}


def _message_ids(meta: Any) -> tuple[int, ...]:
    raw = (meta or {}).get("message_ids") or ""
    return tuple(int(part) for part in str(raw).split(",") if part)
