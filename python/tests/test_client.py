"""The typed client against the bundled server: every operation, sync and async."""

from __future__ import annotations

import asyncio

import pytest

import higmem
from higmem import TurnInput


def test_add_search_ask_delete(shared, user):
    r = shared.add("I adopted a greyhound called Biscuit.", user_id=user)
    assert len(r.added) == 1 and r.events
    r2 = shared.add(["We are flying to Lisbon in June.", TurnInput(speaker="bob", text="Take the coast road.")],
                    user_id=user, session_id="s2")
    assert len(r2.added) == 2
    assert shared.turn(r2.added[1], user_id=user).speaker == "bob"
    assert shared.turn(r2.added[0], user_id=user).speaker == user  # text: said by the user

    res = shared.search("What is my dog called?", user_id=user)
    assert res.evidence[0].turn.id == r.added[0]
    assert res.trace.mode == "offline" and res.trace.stages
    ans = shared.ask("What is my dog called?", user_id=user)
    assert ans.answer == "" and "no LLM" in (ans.note or "")
    assert ans.evidence[0].turn.text == "I adopted a greyhound called Biscuit."

    d = shared.delete(r.added[0], user_id=user)
    assert d.deleted == "turn" and d.id == r.added[0]
    with pytest.raises(higmem.NotFoundError) as e:
        shared.turn(r.added[0], user_id=user)
    assert e.value.status == 404 and e.value.code == "not_found"
    assert all(ev.turn.id != r.added[0] for ev in shared.search("greyhound Biscuit", user_id=user).evidence)


def test_turns_paging_filters_and_ingest(shared, user):
    turns = [{"speaker": "ann", "text": f"note {i} about topic {i % 3}", "metadata": {"topic": str(i % 3)}}
             for i in range(25)]
    r = shared.ingest(turns, batch_size=10, user_id=user)
    assert len(r.added) == 25
    again = shared.ingest([dict(t, id=i) for t, i in zip(turns[:5], r.added[:5])], user_id=user)
    assert again.added == [] and len(again.skipped) == 5  # re-run: nothing added twice
    page = shared.turns(limit=10, user_id=user)
    assert len(page.turns) == 10 and page.next_after_seq
    assert [t.id for t in shared.iter_turns(page=7, user_id=user)] == r.added
    only = list(shared.iter_turns(filters={"topic": "1"}, user_id=user))
    assert len(only) == 8 and all(t.metadata["topic"] == "1" for t in only)
    hits = shared.search("note about topic", filters={"topic": {"in": ["2"]}}, user_id=user).evidence
    assert hits and all(h.turn.metadata["topic"] == "2" for h in hits)
    assert shared.stats(user_id=user).turns == 25


def test_events_profiles_history(shared, user):
    shared.add(["I moved to Lisbon last week.", "My sister Ana lives in Porto."], user_id=user, speaker="carol")
    evs = shared.events(user_id=user).events
    assert evs and evs[0].turns
    one = shared.event(evs[0].event.id, user_id=user)
    assert one.event.id == evs[0].event.id
    profs = shared.profiles(user_id=user).profiles
    assert any(p.entity == "carol" for p in profs)
    carol = shared.profile("carol", user_id=user)
    assert carol.entity == "carol" and carol.attributes
    hist = shared.history(user_id=user).changes
    assert hist and hist[0].kind and hist[0].at.tzinfo is not None
    with pytest.raises(higmem.NotFoundError):
        shared.event("e-none", user_id=user)


def test_export_import_and_jobs(shared, user):
    shared.add(["Biscuit turned three today.", "We celebrated at the beach."], user_id=user)
    data = shared.export(user_id=user)
    assert data.count(b"\n") >= 2
    res = shared.import_(data, user_id=user + "-copy")
    assert res.turns == 2
    assert shared.stats(user_id=user + "-copy").turns == 2

    job = shared.add_job(["A queued turn about sailing."], user_id=user)
    assert job.kind == "add" and job.status in ("queued", "running", "succeeded")
    done = shared.wait_job(job, timeout=60)
    assert done.status == "succeeded" and len(done.add.added) == 1
    ij = shared.wait_job(shared.import_job(data, user_id=user + "-job"), timeout=60)
    assert ij.import_.turns == 2

    gone = shared.delete_space(user_id=user + "-copy")
    assert gone.deleted == "space"
    assert shared.stats(user_id=user + "-copy").turns == 0


def test_errors_carry_the_server_code(shared, user):
    with pytest.raises(higmem.BadRequestError) as e:
        shared.add("   ", user_id=user)
    assert e.value.status == 400 and e.value.code == "invalid_input"
    with pytest.raises(higmem.ConflictError) as e:
        shared.add({"id": "x", "speaker": "a", "text": "one"}, user_id=user)
        shared.add({"id": "x", "speaker": "a", "text": "two"}, user_id=user)
    assert e.value.code == "conflict"
    bad = higmem.Client(shared.base_url, "hgm_not-a-key", user_id=user)
    with pytest.raises(higmem.AuthenticationError) as e:
        bad.stats()
    assert e.value.status == 401 and e.value.code == "unauthorized"
    assert bad.health().status == "ok"  # public
    with pytest.raises(ValueError):
        higmem.Client(shared.base_url, shared.api_key).stats()  # no user id anywhere


def test_server_info(shared):
    v = shared.version()
    assert v.api == "v1" and v.mode == "offline" and v.auth is True
    assert shared.key().users == ["*"]
    assert "/v1/turns" in shared.openapi()["paths"]


def test_async_client(shared, user):
    async def run():
        async with shared.async_client() as c:
            r = await c.add(["Async turns work too.", "Biscuit likes the park."], user_id=user)
            res, ans = await asyncio.gather(c.search("park", user_id=user), c.ask("Who likes the park?", user_id=user))
            assert res.evidence and ans.evidence
            assert [t.id async for t in c.iter_turns(user_id=user)] == r.added
            j = await c.wait_job(await c.add_job("A job from asyncio.", user_id=user), timeout=60)
            assert j.status == "succeeded"
            await c.delete(r.added[0], user_id=user)
            with pytest.raises(higmem.NotFoundError):
                await c.turn(r.added[0], user_id=user)
            return (await c.stats(user_id=user)).turns

    assert asyncio.run(run()) == 2
