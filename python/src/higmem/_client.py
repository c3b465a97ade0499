"""Typed clients of higmem's REST API: Client (sync) and AsyncClient.

Each operation is built once, as a _Call (method, path, query, body and how
to read the answer), and run by either client. OPERATIONS maps every method
to its route; tests/test_openapi.py checks them against /openapi.json.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, AsyncIterator, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union
from urllib.parse import quote

import httpx

from . import _models as m
from ._convert import dump_time
from ._errors import HigmemError, JobFailedError, error_for

TurnLike = Union[str, m.TurnInput, Mapping[str, Any]]
"""A turn to add: its text (said by ``speaker``, by default the user), a
TurnInput, or a dict of TurnInput's JSON fields."""

Filters = Mapping[str, Union[str, Mapping[str, Any]]]
"""Metadata filters: {"topic": "travel", "lang": {"ne": "fr"}, "tag": {"in": ["a", "b"]}}."""

DEFAULT_TIMEOUT = 300.0
"""Seconds a call may take (reads are bounded by the server too)."""


@dataclass
class _Call:
    """One REST call: built by _Ops, run by Client or AsyncClient."""

    op: str
    method: str
    path: str  # the route's pattern, as /openapi.json names it
    path_args: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    json: Optional[dict[str, Any]] = None
    content: Optional[bytes] = None
    content_type: Optional[str] = None
    parse: Optional[Callable[[Any], Any]] = None  # None: the raw bytes

    def url(self) -> str:
        p = self.path
        for k, v in self.path_args.items():
            p = p.replace("{" + k + "}", quote(v, safe=""))
        return p


# OPERATIONS maps each client method to the route it calls.
OPERATIONS: dict[str, tuple[str, str]] = {
    "health": ("GET", "/v1/health"),
    "version": ("GET", "/v1/version"),
    "key": ("GET", "/v1/key"),
    "openapi": ("GET", "/openapi.json"),
    "add": ("POST", "/v1/turns"),
    "add_job": ("POST", "/v1/turns"),
    "job": ("GET", "/v1/jobs/{id}"),
    "search": ("POST", "/v1/search"),
    "ask": ("POST", "/v1/ask"),
    "turn": ("GET", "/v1/turns/{id}"),
    "turns": ("GET", "/v1/turns"),
    "delete": ("DELETE", "/v1/turns/{id}"),
    "events": ("GET", "/v1/events"),
    "event": ("GET", "/v1/events/{id}"),
    "profiles": ("GET", "/v1/profiles"),
    "profile": ("GET", "/v1/profiles/{entity}"),
    "history": ("GET", "/v1/history"),
    "stats": ("GET", "/v1/stats"),
    "delete_space": ("DELETE", "/v1/space"),
    "export": ("GET", "/v1/export"),
    "import_": ("POST", "/v1/import"),
    "import_job": ("POST", "/v1/import"),
}


def _turn_input(t: TurnLike, speaker: Optional[str], session_id: Optional[str]) -> dict[str, Any]:
    if isinstance(t, str):
        d: dict[str, Any] = {"speaker": speaker, "text": t}
    elif isinstance(t, m.TurnInput):
        d = t.to_dict()
    elif isinstance(t, Mapping):
        d = dict(t)
        if isinstance(d.get("occurred_at"), datetime):
            d["occurred_at"] = dump_time(d["occurred_at"])
    else:
        raise TypeError(f"a turn is a str, a TurnInput or a dict, not {type(t).__name__}")
    if not d.get("speaker"):
        d["speaker"] = speaker
    if session_id and not d.get("session_id"):
        d["session_id"] = session_id
    return d


def _filters(f: Optional[Filters]) -> Optional[dict[str, Any]]:
    if f is None:
        return None
    return {k: (v if isinstance(v, str) else (v.to_dict() if isinstance(v, m.Condition) else dict(v))) for k, v in f.items()}


def _body(data: Union[bytes, str, IO[bytes], IO[str]]) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode()
    b = data.read()
    return b.encode() if isinstance(b, str) else b


class _Ops:
    """Builds the calls of every operation; holds the default space."""

    def __init__(self, user_id: Optional[str], agent_id: Optional[str]) -> None:
        self.user_id = user_id
        self.agent_id = agent_id

    def _scope(self, user_id: Optional[str], agent_id: Optional[str]) -> dict[str, str]:
        user = user_id if user_id is not None else self.user_id
        if not user:
            raise ValueError("no user_id: pass user_id=..., or give the client a default (user_id=... when creating it)")
        agent = agent_id if agent_id is not None else self.agent_id
        s = {"user_id": user}
        if agent:
            s["agent_id"] = agent
        return s

    def add(self, turns, speaker, session_id, user_id, agent_id, job: bool) -> _Call:
        sc = self._scope(user_id, agent_id)
        many = not isinstance(turns, (str, m.TurnInput, Mapping))
        items = list(turns) if many else [turns]
        if not items:
            raise ValueError("no turns to add")
        who = speaker or sc["user_id"]
        body: dict[str, Any] = dict(sc)
        if many:
            body["turns"] = [_turn_input(t, who, session_id) for t in items]
        else:
            body["turn"] = _turn_input(items[0], who, session_id)
        if job:
            return _Call("add_job", "POST", "/v1/turns", params={"async": "true"}, json=body, parse=m.Job.from_dict)
        return _Call("add", "POST", "/v1/turns", json=body, parse=m.AddResponse.from_dict)

    def retrieve(self, op, question, user_id, agent_id, k_turn, k_event, evidence_tokens, max_evidence,
                 as_of, session_id=None, filters=None) -> _Call:
        body: dict[str, Any] = dict(self._scope(user_id, agent_id))
        body["question"] = question
        for k, v in (("k_turn", k_turn), ("k_event", k_event), ("evidence_tokens", evidence_tokens),
                     ("max_evidence", max_evidence), ("session_id", session_id)):
            if v:
                body[k] = v
        if as_of is not None:
            body["as_of"] = dump_time(as_of)
        if filters:
            body["filters"] = _filters(filters)
        parse = m.SearchResponse.from_dict if op == "search" else m.AskResponse.from_dict
        return _Call(op, "POST", "/v1/" + op, json=body, parse=parse)

    def scoped(self, op, user_id, agent_id, parse, path_args=None, **params) -> _Call:
        method, path = OPERATIONS[op]
        q = self._scope(user_id, agent_id)
        for k, v in params.items():
            if v is None:
                continue
            if isinstance(v, datetime):
                v = dump_time(v)
            elif isinstance(v, bool):
                v = "true" if v else "false"
            elif not isinstance(v, str):
                v = json.dumps(v) if isinstance(v, Mapping) else str(v)
            q[k] = v
        return _Call(op, method, path, path_args=path_args or {}, params=q, parse=parse)

    def import_(self, data, user_id, agent_id, job: bool) -> _Call:
        c = self.scoped("import_job" if job else "import_", user_id, agent_id,
                        m.Job.from_dict if job else m.ImportResponse.from_dict, **({"async": True} if job else {}))
        c.content, c.content_type = _body(data), "application/x-ndjson"
        return c


def _error(resp: httpx.Response) -> Exception:
    code, msg = None, resp.text.strip() or resp.reason_phrase
    try:
        detail = resp.json()["error"]
        code, msg = detail["code"], detail["message"]
    except (ValueError, KeyError, TypeError):
        pass
    return error_for(resp.status_code, code, msg)


def _headers(api_key: Optional[str]) -> dict[str, str]:
    h = {"User-Agent": "higmem-python"}
    if api_key:
        h["Authorization"] = "Bearer " + api_key
    return h


def _merge(results: Sequence[m.AddResponse]) -> m.AddResponse:
    out = m.AddResponse(added=[], skipped=[], events=[], warnings=[], calls=[])
    events: set[str] = set()
    for r in results:
        out.added += r.added or []
        out.skipped += r.skipped or []
        out.warnings += r.warnings or []
        out.calls += r.calls or []
        events.update(r.events or [])
    out.events = sorted(events)
    return out


def _batches(turns: Iterable[TurnLike], size: int) -> Iterator[list[TurnLike]]:
    if size < 1:
        raise ValueError("batch_size must be at least 1")
    batch: list[TurnLike] = []
    for t in turns:
        batch.append(t)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class Client:
    """A client of a higmem server's REST API.

    ``user_id`` and ``agent_id`` name the default memory space; every method
    also takes them. Errors are raised as APIError subclasses carrying the
    server's error code. Use it as a context manager, or call close().
    """

    def __init__(self, base_url: str, api_key: Optional[str] = None, *, user_id: Optional[str] = None,
                 agent_id: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
                 http_client: Optional[httpx.Client] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._ops = _Ops(user_id, agent_id)
        self._own = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = _headers(api_key)

    @property
    def user_id(self) -> Optional[str]:
        """The default user id."""
        return self._ops.user_id

    @property
    def agent_id(self) -> Optional[str]:
        """The default agent id."""
        return self._ops.agent_id

    def close(self) -> None:
        """Close the HTTP connections (not a server)."""
        if self._own:
            self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _run(self, c: _Call) -> Any:
        headers = dict(self._headers)
        if c.content_type:
            headers["Content-Type"] = c.content_type
        resp = self._http.request(c.method, self.base_url + c.url(), params=c.params or None, json=c.json,
                                  content=c.content, headers=headers)
        if resp.status_code >= 400:
            raise _error(resp)
        if c.parse is None:
            return resp.content
        return c.parse(resp.json())

    # Server.

    def health(self) -> m.Health:
        """GET /v1/health: whether the server is up (no key needed)."""
        return self._run(_Call("health", "GET", "/v1/health", parse=m.Health.from_dict))

    def version(self) -> m.VersionInfo:
        """GET /v1/version: the server's version, mode and embedder."""
        return self._run(_Call("version", "GET", "/v1/version", parse=m.VersionInfo.from_dict))

    def key(self) -> m.KeyInfo:
        """GET /v1/key: the user ids the API key may use."""
        return self._run(_Call("key", "GET", "/v1/key", parse=m.KeyInfo.from_dict))

    def openapi(self) -> dict[str, Any]:
        """GET /openapi.json: the OpenAPI document of the REST API."""
        return self._run(_Call("openapi", "GET", "/openapi.json", parse=lambda d: d))

    # Writing.

    def add(self, turns: Union[TurnLike, Iterable[TurnLike]], *, speaker: Optional[str] = None,
            session_id: Optional[str] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.AddResponse:
        """POST /v1/turns: add one turn or a batch, and build memory from them.

        A turn given as text is said by ``speaker`` (default: the user id).
        """
        return self._run(self._ops.add(turns, speaker, session_id, user_id, agent_id, job=False))

    def add_job(self, turns: Union[TurnLike, Iterable[TurnLike]], *, speaker: Optional[str] = None,
                session_id: Optional[str] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Job:
        """POST /v1/turns?async=true: queue an add as a job; see wait_job."""
        return self._run(self._ops.add(turns, speaker, session_id, user_id, agent_id, job=True))

    def ingest(self, turns: Iterable[TurnLike], *, batch_size: int = 500, speaker: Optional[str] = None,
               session_id: Optional[str] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.AddResponse:
        """Add many turns, ``batch_size`` at a time (each batch one add).

        Turns already stored (same id and content) are skipped, so a failed
        ingest can be run again. Returns the adds merged.
        """
        return _merge([self.add(b, speaker=speaker, session_id=session_id, user_id=user_id, agent_id=agent_id)
                       for b in _batches(turns, batch_size)])

    def delete(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.DeleteResult:
        """DELETE /v1/turns/{id}: forget a turn (events are rebuilt without it)."""
        return self._run(self._ops.scoped("delete", user_id, agent_id, m.DeleteResult.from_dict, {"id": id}))

    def delete_space(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.DeleteResult:
        """DELETE /v1/space: forget a whole memory space."""
        return self._run(self._ops.scoped("delete_space", user_id, agent_id, m.DeleteResult.from_dict))

    def import_(self, data: Union[bytes, str, IO[bytes], IO[str]], *, user_id: Optional[str] = None,
                agent_id: Optional[str] = None) -> m.ImportResponse:
        """POST /v1/import: import an export (JSON lines) into a space, in one transaction."""
        return self._run(self._ops.import_(data, user_id, agent_id, job=False))

    def import_job(self, data: Union[bytes, str, IO[bytes], IO[str]], *, user_id: Optional[str] = None,
                   agent_id: Optional[str] = None) -> m.Job:
        """POST /v1/import?async=true: queue an import as a job."""
        return self._run(self._ops.import_(data, user_id, agent_id, job=True))

    # Reading.

    def search(self, question: str, *, k_turn: int = 0, k_event: int = 0, evidence_tokens: int = 0,
               max_evidence: int = 0, as_of: Optional[datetime] = None, session_id: Optional[str] = None,
               filters: Optional[Filters] = None, user_id: Optional[str] = None,
               agent_id: Optional[str] = None) -> m.SearchResponse:
        """POST /v1/search: the evidence turns for a question, with the retrieval trace."""
        return self._run(self._ops.retrieve("search", question, user_id, agent_id, k_turn, k_event, evidence_tokens,
                                            max_evidence, as_of, session_id, filters))

    def ask(self, question: str, *, k_turn: int = 0, k_event: int = 0, evidence_tokens: int = 0,
            max_evidence: int = 0, as_of: Optional[datetime] = None, user_id: Optional[str] = None,
            agent_id: Optional[str] = None) -> m.AskResponse:
        """POST /v1/ask: a written answer with its evidence (evidence and a note without an LLM)."""
        return self._run(self._ops.retrieve("ask", question, user_id, agent_id, k_turn, k_event, evidence_tokens,
                                            max_evidence, as_of))

    def turn(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Turn:
        """GET /v1/turns/{id}: one turn."""
        return self._run(self._ops.scoped("turn", user_id, agent_id, m.Turn.from_dict, {"id": id}))

    def turns(self, *, session_id: Optional[str] = None, after_seq: Optional[int] = None, limit: Optional[int] = None,
              filters: Optional[Filters] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.TurnList:
        """GET /v1/turns: a page of turns in order; next_after_seq names the next page."""
        return self._run(self._ops.scoped("turns", user_id, agent_id, m.TurnList.from_dict, session_id=session_id,
                                          after_seq=after_seq, limit=limit, filters=_filters(filters)))

    def iter_turns(self, *, session_id: Optional[str] = None, filters: Optional[Filters] = None, page: int = 1000,
                   user_id: Optional[str] = None, agent_id: Optional[str] = None) -> Iterator[m.Turn]:
        """Every turn in order, a page at a time."""
        after: Optional[int] = None
        while True:
            tl = self.turns(session_id=session_id, after_seq=after, limit=page, filters=filters, user_id=user_id, agent_id=agent_id)
            yield from tl.turns or []
            if not tl.next_after_seq:
                return
            after = tl.next_after_seq

    def events(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.EventList:
        """GET /v1/events: the events with their member turns."""
        return self._run(self._ops.scoped("events", user_id, agent_id, m.EventList.from_dict))

    def event(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.EventView:
        """GET /v1/events/{id}: one event with its turns."""
        return self._run(self._ops.scoped("event", user_id, agent_id, m.EventView.from_dict, {"id": id}))

    def profiles(self, *, as_of: Optional[datetime] = None, user_id: Optional[str] = None,
                 agent_id: Optional[str] = None) -> m.ProfileList:
        """GET /v1/profiles: what memory knows about each person."""
        return self._run(self._ops.scoped("profiles", user_id, agent_id, m.ProfileList.from_dict, as_of=as_of))

    def profile(self, entity: str, *, as_of: Optional[datetime] = None, user_id: Optional[str] = None,
                agent_id: Optional[str] = None) -> m.Profile:
        """GET /v1/profiles/{entity}: one person's profile with the history of each value."""
        return self._run(self._ops.scoped("profile", user_id, agent_id, m.Profile.from_dict, {"entity": entity}, as_of=as_of))

    def history(self, *, kind: Optional[str] = None, id: Optional[str] = None, user_id: Optional[str] = None,
                agent_id: Optional[str] = None) -> m.HistoryList:
        """GET /v1/history: every change to the space's turns and events (or to one)."""
        return self._run(self._ops.scoped("history", user_id, agent_id, m.HistoryList.from_dict, kind=kind, id=id))

    def stats(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Stats:
        """GET /v1/stats: counts of the space's turns, events and links."""
        return self._run(self._ops.scoped("stats", user_id, agent_id, m.Stats.from_dict))

    def export(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> bytes:
        """GET /v1/export: the space as JSON lines, for import_."""
        return self._run(self._ops.scoped("export", user_id, agent_id, None))

    # Jobs.

    def job(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Job:
        """GET /v1/jobs/{id}: an async job's state."""
        return self._run(self._ops.scoped("job", user_id, agent_id, m.Job.from_dict, {"id": id}))

    def wait_job(self, job: Union[m.Job, str], *, interval: float = 0.05, timeout: Optional[float] = None,
                 user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Job:
        """Poll a job until it ends; raise JobFailedError if it failed."""
        if isinstance(job, m.Job):
            job_id, user_id, agent_id = job.id, user_id or job.user_id, agent_id or job.agent_id
        else:
            job_id = job
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            j = self.job(job_id, user_id=user_id, agent_id=agent_id)
            if j.status in ("succeeded", "failed"):
                if j.status == "failed":
                    raise JobFailedError(j)
                return j
            if deadline is not None and time.monotonic() > deadline:
                raise HigmemError(f"job {job_id} still {j.status} after {timeout} s")
            time.sleep(interval)


class AsyncClient:
    """The asyncio twin of Client: the same methods, awaited."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, *, user_id: Optional[str] = None,
                 agent_id: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
                 http_client: Optional[httpx.AsyncClient] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._ops = _Ops(user_id, agent_id)
        self._own = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._headers = _headers(api_key)

    @property
    def user_id(self) -> Optional[str]:
        """The default user id."""
        return self._ops.user_id

    @property
    def agent_id(self) -> Optional[str]:
        """The default agent id."""
        return self._ops.agent_id

    async def aclose(self) -> None:
        """Close the HTTP connections (not a server)."""
        if self._own:
            await self._http.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def _run(self, c: _Call) -> Any:
        headers = dict(self._headers)
        if c.content_type:
            headers["Content-Type"] = c.content_type
        resp = await self._http.request(c.method, self.base_url + c.url(), params=c.params or None, json=c.json,
                                        content=c.content, headers=headers)
        if resp.status_code >= 400:
            raise _error(resp)
        if c.parse is None:
            return resp.content
        return c.parse(resp.json())

    async def health(self) -> m.Health:
        """GET /v1/health."""
        return await self._run(_Call("health", "GET", "/v1/health", parse=m.Health.from_dict))

    async def version(self) -> m.VersionInfo:
        """GET /v1/version."""
        return await self._run(_Call("version", "GET", "/v1/version", parse=m.VersionInfo.from_dict))

    async def key(self) -> m.KeyInfo:
        """GET /v1/key."""
        return await self._run(_Call("key", "GET", "/v1/key", parse=m.KeyInfo.from_dict))

    async def openapi(self) -> dict[str, Any]:
        """GET /openapi.json."""
        return await self._run(_Call("openapi", "GET", "/openapi.json", parse=lambda d: d))

    async def add(self, turns: Union[TurnLike, Iterable[TurnLike]], *, speaker: Optional[str] = None,
                  session_id: Optional[str] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.AddResponse:
        """POST /v1/turns (see Client.add)."""
        return await self._run(self._ops.add(turns, speaker, session_id, user_id, agent_id, job=False))

    async def add_job(self, turns: Union[TurnLike, Iterable[TurnLike]], *, speaker: Optional[str] = None,
                      session_id: Optional[str] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Job:
        """POST /v1/turns?async=true."""
        return await self._run(self._ops.add(turns, speaker, session_id, user_id, agent_id, job=True))

    async def ingest(self, turns: Iterable[TurnLike], *, batch_size: int = 500, speaker: Optional[str] = None,
                     session_id: Optional[str] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.AddResponse:
        """Add many turns, batch_size at a time (see Client.ingest)."""
        return _merge([await self.add(b, speaker=speaker, session_id=session_id, user_id=user_id, agent_id=agent_id)
                       for b in _batches(turns, batch_size)])

    async def delete(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.DeleteResult:
        """DELETE /v1/turns/{id}."""
        return await self._run(self._ops.scoped("delete", user_id, agent_id, m.DeleteResult.from_dict, {"id": id}))

    async def delete_space(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.DeleteResult:
        """DELETE /v1/space."""
        return await self._run(self._ops.scoped("delete_space", user_id, agent_id, m.DeleteResult.from_dict))

    async def import_(self, data: Union[bytes, str, IO[bytes], IO[str]], *, user_id: Optional[str] = None,
                      agent_id: Optional[str] = None) -> m.ImportResponse:
        """POST /v1/import."""
        return await self._run(self._ops.import_(data, user_id, agent_id, job=False))

    async def import_job(self, data: Union[bytes, str, IO[bytes], IO[str]], *, user_id: Optional[str] = None,
                         agent_id: Optional[str] = None) -> m.Job:
        """POST /v1/import?async=true."""
        return await self._run(self._ops.import_(data, user_id, agent_id, job=True))

    async def search(self, question: str, *, k_turn: int = 0, k_event: int = 0, evidence_tokens: int = 0,
                     max_evidence: int = 0, as_of: Optional[datetime] = None, session_id: Optional[str] = None,
                     filters: Optional[Filters] = None, user_id: Optional[str] = None,
                     agent_id: Optional[str] = None) -> m.SearchResponse:
        """POST /v1/search."""
        return await self._run(self._ops.retrieve("search", question, user_id, agent_id, k_turn, k_event, evidence_tokens,
                                                  max_evidence, as_of, session_id, filters))

    async def ask(self, question: str, *, k_turn: int = 0, k_event: int = 0, evidence_tokens: int = 0,
                  max_evidence: int = 0, as_of: Optional[datetime] = None, user_id: Optional[str] = None,
                  agent_id: Optional[str] = None) -> m.AskResponse:
        """POST /v1/ask."""
        return await self._run(self._ops.retrieve("ask", question, user_id, agent_id, k_turn, k_event, evidence_tokens,
                                                  max_evidence, as_of))

    async def turn(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Turn:
        """GET /v1/turns/{id}."""
        return await self._run(self._ops.scoped("turn", user_id, agent_id, m.Turn.from_dict, {"id": id}))

    async def turns(self, *, session_id: Optional[str] = None, after_seq: Optional[int] = None, limit: Optional[int] = None,
                    filters: Optional[Filters] = None, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.TurnList:
        """GET /v1/turns."""
        return await self._run(self._ops.scoped("turns", user_id, agent_id, m.TurnList.from_dict, session_id=session_id,
                                                after_seq=after_seq, limit=limit, filters=_filters(filters)))

    async def iter_turns(self, *, session_id: Optional[str] = None, filters: Optional[Filters] = None, page: int = 1000,
                         user_id: Optional[str] = None, agent_id: Optional[str] = None) -> AsyncIterator[m.Turn]:
        """Every turn in order, a page at a time."""
        after: Optional[int] = None
        while True:
            tl = await self.turns(session_id=session_id, after_seq=after, limit=page, filters=filters, user_id=user_id, agent_id=agent_id)
            for t in tl.turns or []:
                yield t
            if not tl.next_after_seq:
                return
            after = tl.next_after_seq

    async def events(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.EventList:
        """GET /v1/events."""
        return await self._run(self._ops.scoped("events", user_id, agent_id, m.EventList.from_dict))

    async def event(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.EventView:
        """GET /v1/events/{id}."""
        return await self._run(self._ops.scoped("event", user_id, agent_id, m.EventView.from_dict, {"id": id}))

    async def profiles(self, *, as_of: Optional[datetime] = None, user_id: Optional[str] = None,
                       agent_id: Optional[str] = None) -> m.ProfileList:
        """GET /v1/profiles."""
        return await self._run(self._ops.scoped("profiles", user_id, agent_id, m.ProfileList.from_dict, as_of=as_of))

    async def profile(self, entity: str, *, as_of: Optional[datetime] = None, user_id: Optional[str] = None,
                      agent_id: Optional[str] = None) -> m.Profile:
        """GET /v1/profiles/{entity}."""
        return await self._run(self._ops.scoped("profile", user_id, agent_id, m.Profile.from_dict, {"entity": entity}, as_of=as_of))

    async def history(self, *, kind: Optional[str] = None, id: Optional[str] = None, user_id: Optional[str] = None,
                      agent_id: Optional[str] = None) -> m.HistoryList:
        """GET /v1/history."""
        return await self._run(self._ops.scoped("history", user_id, agent_id, m.HistoryList.from_dict, kind=kind, id=id))

    async def stats(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Stats:
        """GET /v1/stats."""
        return await self._run(self._ops.scoped("stats", user_id, agent_id, m.Stats.from_dict))

    async def export(self, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> bytes:
        """GET /v1/export."""
        return await self._run(self._ops.scoped("export", user_id, agent_id, None))

    async def job(self, id: str, *, user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Job:
        """GET /v1/jobs/{id}."""
        return await self._run(self._ops.scoped("job", user_id, agent_id, m.Job.from_dict, {"id": id}))

    async def wait_job(self, job: Union[m.Job, str], *, interval: float = 0.05, timeout: Optional[float] = None,
                       user_id: Optional[str] = None, agent_id: Optional[str] = None) -> m.Job:
        """Poll a job until it ends; raise JobFailedError if it failed."""
        if isinstance(job, m.Job):
            job_id, user_id, agent_id = job.id, user_id or job.user_id, agent_id or job.agent_id
        else:
            job_id = job
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            j = await self.job(job_id, user_id=user_id, agent_id=agent_id)
            if j.status in ("succeeded", "failed"):
                if j.status == "failed":
                    raise JobFailedError(j)
                return j
            if deadline is not None and time.monotonic() > deadline:
                raise HigmemError(f"job {job_id} still {j.status} after {timeout} s")
            await asyncio.sleep(interval)
