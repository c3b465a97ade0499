"""The LangChain adapters, run inside LangChain's own runnables."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder  # noqa: E402
from langchain_core.runnables.history import RunnableWithMessageHistory  # noqa: E402

from higmem.langchain import HigmemChatMessageHistory, HigmemRetriever  # noqa: E402


def test_chat_history_in_runnable_with_message_history(shared, user):
    llm = FakeListChatModel(responses=["Nice to meet Biscuit!", "Your dog is called Biscuit."])
    prompt = ChatPromptTemplate.from_messages([("system", "You remember."), MessagesPlaceholder("history"), ("human", "{input}")])
    chain = RunnableWithMessageHistory(prompt | llm, lambda sid: HigmemChatMessageHistory(shared, sid, user_id=user),
                                       input_messages_key="input", history_messages_key="history")
    cfg = {"configurable": {"session_id": "walk"}}
    assert chain.invoke({"input": "I adopted a greyhound called Biscuit."}, config=cfg).content == "Nice to meet Biscuit!"
    chain.invoke({"input": "What is my dog called?"}, config=cfg)

    hist = HigmemChatMessageHistory(shared, "walk", user_id=user)
    msgs = hist.messages
    assert [type(m) for m in msgs] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    assert msgs[0].content == "I adopted a greyhound called Biscuit." and msgs[3].content == "Your dog is called Biscuit."
    # They are memory: the turns of session "walk", searchable across sessions.
    turns = list(shared.iter_turns(session_id="walk", user_id=user))
    assert [t.speaker for t in turns] == [user, "assistant", user, "assistant"]
    assert shared.search("greyhound", user_id=user).evidence[0].turn.session_id == "walk"

    # Another session stays apart; clear forgets only this one.
    other = HigmemChatMessageHistory(shared, "other", user_id=user)
    other.add_messages([SystemMessage(content="Be brief."), HumanMessage(content="Hello")])
    assert [type(m) for m in other.messages] == [SystemMessage, HumanMessage]
    hist.clear()
    assert hist.messages == [] and len(other.messages) == 2


def test_retriever(shared, user):
    shared.add(["My greyhound Biscuit loves the beach.", "I work as a nurse in Porto."], user_id=user, session_id="s1")
    r = HigmemRetriever(client=shared, user_id=user, k=1)
    docs = r.invoke("Where do I work?")
    assert len(docs) == 1 and docs[0].page_content == "I work as a nurse in Porto."
    assert docs[0].metadata["session_id"] == "s1" and docs[0].metadata["id"] == docs[0].id

    async def run():
        async with shared.async_client() as ac:
            ar = HigmemRetriever(client=shared, async_client=ac, user_id=user)
            adocs = await ar.ainvoke("beach dog")
            h = HigmemChatMessageHistory(shared, "async", user_id=user, async_client=ac)
            await h.aadd_messages([HumanMessage(content="Async hello"), AIMessage(content="Async hi")])
            return adocs, await h.aget_messages()

    adocs, amsgs = asyncio.run(run())
    assert adocs and adocs[0].page_content == "My greyhound Biscuit loves the beach."
    assert [m.content for m in amsgs] == ["Async hello", "Async hi"]
