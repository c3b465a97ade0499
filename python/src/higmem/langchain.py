"""LangChain adapters: higmem as a chat message history and as a retriever.

Needs langchain-core (``pip install 'higmem[langchain]'``)::

    from langchain_core.runnables.history import RunnableWithMessageHistory
    from higmem.langchain import HigmemChatMessageHistory, HigmemRetriever

    chain = RunnableWithMessageHistory(
        llm, lambda session_id: HigmemChatMessageHistory(mem, session_id))
    retriever = HigmemRetriever(client=mem, k=8)

A conversation's messages are turns of one session (``session_id``) of a
memory space; higmem groups them into events and searches them across every
session, which is what HigmemRetriever returns.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever

from ._client import AsyncClient, Client
from ._models import Evidence, Turn

# META_TYPE is the turn metadata field that keeps a message's LangChain
# type, so that history reads back what was written.
META_TYPE = "lc_type"

_SPEAKERS = {"human": None, "ai": "assistant", "system": "system", "tool": "tool"}


def _text(msg: BaseMessage) -> str:
    c = msg.content
    if isinstance(c, str):
        return c
    parts = []
    for p in c:
        if isinstance(p, str):
            parts.append(p)
        elif isinstance(p, dict) and p.get("type") == "text":
            parts.append(p.get("text", ""))
    return "\n".join(parts)


def _message(t: Turn) -> BaseMessage:
    kind = (t.metadata or {}).get(META_TYPE)
    meta = {"id": t.id, "speaker": t.speaker}
    if kind == "ai" or (kind is None and t.speaker == "assistant"):
        return AIMessage(content=t.text, id=t.id, additional_kwargs=meta)
    if kind == "system":
        return SystemMessage(content=t.text, id=t.id, additional_kwargs=meta)
    if kind == "tool":
        return ToolMessage(content=t.text, id=t.id, tool_call_id=(t.metadata or {}).get("tool_call_id", ""),
                           additional_kwargs=meta)
    return HumanMessage(content=t.text, id=t.id, additional_kwargs=meta)


class HigmemChatMessageHistory(BaseChatMessageHistory):
    """The messages of one conversation, kept as the turns of a session.

    ``client`` is a higmem Client or Memory (and ``async_client`` an
    AsyncClient for the a-methods; by default they run the sync client in
    a thread). A human message is said by ``human_speaker`` (default: the
    user id), an AI message by "assistant"; the message type is kept in the
    turn's metadata. Messages whose text is empty are not stored.
    """

    def __init__(self, client: Client, session_id: str, *, user_id: Optional[str] = None,
                 agent_id: Optional[str] = None, human_speaker: Optional[str] = None,
                 async_client: Optional[AsyncClient] = None) -> None:
        self.client = client
        self.async_client = async_client
        self.session_id = session_id
        self.user_id = user_id or client.user_id
        if not self.user_id:
            raise ValueError("HigmemChatMessageHistory needs a user_id (or a client with a default one)")
        self.agent_id = agent_id if agent_id is not None else client.agent_id
        self.human_speaker = human_speaker or self.user_id

    def _scope(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "agent_id": self.agent_id}

    def _turns(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        out = []
        for msg in messages:
            text = _text(msg)
            if not text.strip():
                continue
            kind = msg.type if msg.type in _SPEAKERS else "human"
            meta = {META_TYPE: kind}
            if isinstance(msg, ToolMessage) and msg.tool_call_id:
                meta["tool_call_id"] = msg.tool_call_id
            out.append({"speaker": _SPEAKERS[kind] or self.human_speaker, "text": text,
                        "session_id": self.session_id, "metadata": meta})
        return out

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages, oldest first."""
        return [_message(t) for t in self.client.iter_turns(session_id=self.session_id, **self._scope())]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store messages as turns of the session, in one add."""
        turns = self._turns(messages)
        if turns:
            self.client.add(turns, **self._scope())

    def clear(self) -> None:
        """Forget the session's turns (higmem.delete each: no copy is kept)."""
        for t in list(self.client.iter_turns(session_id=self.session_id, **self._scope())):
            self.client.delete(t.id, **self._scope())

    async def aget_messages(self) -> list[BaseMessage]:
        if self.async_client is None:
            return await super().aget_messages()
        return [_message(t) async for t in self.async_client.iter_turns(session_id=self.session_id, **self._scope())]

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self.async_client is None:
            return await super().aadd_messages(messages)
        turns = self._turns(messages)
        if turns:
            await self.async_client.add(turns, **self._scope())

    async def aclear(self) -> None:
        if self.async_client is None:
            return await super().aclear()
        ids = [t.id async for t in self.async_client.iter_turns(session_id=self.session_id, **self._scope())]
        for i in ids:
            await self.async_client.delete(i, **self._scope())


def _document(e: Evidence) -> Document:
    t = e.turn
    meta: dict[str, Any] = {"id": t.id, "speaker": t.speaker, "score": e.score}
    for k, v in (("session_id", t.session_id), ("date", e.date), ("events", e.events), ("times", e.times),
                 ("metadata", t.metadata)):
        if v:
            meta[k] = v
    if t.occurred_at is not None:
        meta["occurred_at"] = t.occurred_at.isoformat()
    return Document(page_content=t.text, id=t.id, metadata=meta)


class HigmemRetriever(BaseRetriever):
    """Retrieves the evidence turns higmem selects for a query (POST
    /v1/search), as Documents in chronological order.

    ``k`` caps the documents (higmem's own stopping rule may give fewer);
    ``session_id`` and ``filters`` restrict the search.
    """

    client: Any
    """A higmem Client or Memory."""
    async_client: Any = None
    """An AsyncClient for ainvoke (default: the sync client in a thread)."""
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    k: int = 0
    session_id: Optional[str] = None
    filters: Optional[dict[str, Union[str, dict[str, Any]]]] = None

    def _kwargs(self) -> dict[str, Any]:
        return {"max_evidence": self.k, "session_id": self.session_id, "filters": self.filters,
                "user_id": self.user_id, "agent_id": self.agent_id}

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        res = self.client.search(query, **self._kwargs())
        return [_document(e) for e in res.evidence or []]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        res = await self.async_client.search(query, **self._kwargs())
        return [_document(e) for e in res.evidence or []]
