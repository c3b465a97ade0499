"""The client and its models checked against the server's /openapi.json."""

from __future__ import annotations

import importlib.util
import inspect
from datetime import datetime, timezone
from pathlib import Path

import higmem
from higmem import _client, _models
from higmem._client import OPERATIONS, _Ops

from conftest import REPO

# Routes of the OpenAI wire that the OpenAI SDKs speak (docs/CHAT.md), not this client.
NOT_CLIENT = {("POST", "/v1/chat/completions"), ("GET", "/v1/models")}


def _generator():
    spec = importlib.util.spec_from_file_location("gen_models", REPO / "python" / "tools" / "gen_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_models_are_generated_from_the_served_document(shared):
    doc = shared.openapi()
    want = _generator().generate(doc)
    have = Path(_models.__file__).read_text()
    assert have == want, "src/higmem/_models.py differs from what tools/gen_models.py makes of /openapi.json: regenerate it"


def test_every_operation_has_a_method(shared):
    doc = shared.openapi()
    served = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    covered = set(OPERATIONS.values())
    assert served - NOT_CLIENT <= covered, f"operations without a client method: {served - NOT_CLIENT - covered}"
    assert covered <= served, f"client methods on routes the server lacks: {covered - served}"
    for name in OPERATIONS:
        assert callable(getattr(higmem.Client, name)) and inspect.iscoroutinefunction(getattr(higmem.AsyncClient, name)), name


def _calls():
    """Every call the client can make, with every optional part set."""
    o = _Ops("alice", "bot")
    t = datetime(2026, 1, 2, tzinfo=timezone.utc)
    f = {"topic": "travel", "lang": {"ne": "fr"}}
    yield o.add(["a", {"speaker": "b", "text": "c", "metadata": {"k": "v"}, "time": "2023-05-08"}], "x", "s1", None, None, job=False)
    yield o.add("a", None, None, None, None, job=True)
    yield o.retrieve("search", "q", None, None, 5, 3, 500, 4, t, "s1", f)
    yield o.retrieve("ask", "q", None, None, 5, 3, 500, 4, t)
    yield o.import_(b"{}\n", None, None, job=False)
    yield o.import_(b"{}\n", None, None, job=True)
    scoped = {"job": {}, "turn": {}, "turns": dict(session_id="s", after_seq=3, limit=10, filters=f), "events": {},
              "event": {}, "profiles": dict(as_of=t), "profile": dict(as_of=t), "history": dict(kind="turn", id="t1"),
              "stats": {}, "export": {}, "delete": {}, "delete_space": {}}
    for name, extra in scoped.items():
        path = OPERATIONS[name][1]
        yield o.scoped(name, None, None, None, {k: "x" for k in ("id", "entity") if "{" + k + "}" in path}, **extra)


def _check_body(doc, schema, body, where):
    if "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    if isinstance(body, dict) and "properties" in schema:
        unknown = set(body) - set(schema["properties"])
        assert not unknown, f"{where}: fields {unknown} are not in the schema"
        for k, v in body.items():
            _check_body(doc, schema["properties"][k], v, f"{where}.{k}")
        for r in schema.get("required", []):
            assert r in body, f"{where}: required field {r} missing"
    elif isinstance(body, list) and "items" in schema:
        for i, v in enumerate(body):
            _check_body(doc, schema["items"], v, f"{where}[{i}]")


def test_requests_match_the_document(shared):
    doc = shared.openapi()
    seen = set()
    for c in _calls():
        op = doc["paths"][c.path][c.method.lower()]
        seen.add(c.op)
        params = {p["name"]: p for p in op.get("parameters", []) if p["in"] == "query"}
        unknown = set(c.params) - set(params)
        assert not unknown, f"{c.op}: query parameters {unknown} are not documented for {c.method} {c.path}"
        for name, p in params.items():
            if p.get("required"):
                assert name in c.params, f"{c.op}: required query parameter {name} not sent"
        path_params = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
        assert path_params == set(c.path_args), f"{c.op}: path parameters {set(c.path_args)}, documented {path_params}"
        if c.json is not None:
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            _check_body(doc, schema, c.json, c.op)
        if c.content is not None:
            assert c.content_type in op["requestBody"]["content"], f"{c.op}: content type {c.content_type}"
    assert {"add", "add_job", "search", "ask", "turns", "history", "profile", "delete", "delete_space", "import_"} <= seen


def test_responses_parse_every_documented_field(shared):
    # Each model reads back what it writes, for the fields the document lists.
    doc = shared.openapi()
    for name, schema in doc["components"]["schemas"].items():
        cls = getattr(_models, name)
        fields = {f.name.rstrip("_") for f in cls.__dataclass_fields__.values()}
        assert fields == set(schema.get("properties", {})), name
