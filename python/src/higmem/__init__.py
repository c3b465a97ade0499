"""higmem: long-term memory for LLM agents, from Python.

This package carries the higmem binary (the `higmem` command) and a typed
client of its REST API:

- ``Memory.local(path)`` starts the bundled server on a database file and
  stops it on close: an embedded memory with no other service.
- ``Client`` / ``AsyncClient`` talk to any higmem server (httpx).
- ``higmem.langchain`` adapts memory to LangChain (chat message history,
  retriever).

Errors from the server are raised as ``APIError`` subclasses whose ``code``
is the server's error code. See docs/PYTHON.md.
"""

from ._client import AsyncClient, Client, Filters, TurnLike
from ._errors import (
    APIError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    HigmemError,
    JobFailedError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServerStartError,
    TooLargeError,
)
from ._local import Memory, binary_path
from ._models import *  # noqa: F401,F403  (the wire types)
from ._models import __all__ as _models_all

__version__ = "0.1.0.dev0"

__all__ = [
    "APIError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConflictError",
    "Filters",
    "HigmemError",
    "JobFailedError",
    "Memory",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "ServerStartError",
    "TooLargeError",
    "TurnLike",
    "binary_path",
    *_models_all,
]
