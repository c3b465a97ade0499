"""Exceptions of the higmem client."""

from __future__ import annotations

from typing import Optional


class HigmemError(Exception):
    """Base class of every error this package raises."""


class APIError(HigmemError):
    """The server answered with an error status.

    ``code`` is the server's error code ("not_found", "forbidden",
    "invalid_request"... see docs/SERVER.md), ``status`` the HTTP status and
    ``message`` the server's explanation. ``code`` is None when the body was
    not a higmem error body (a proxy's page, for instance).
    """

    def __init__(self, status: int, code: Optional[str], message: str) -> None:
        self.status = status
        self.code = code
        self.message = message
        super().__init__(f"HTTP {status} {code}: {message}" if code else f"HTTP {status}: {message}")


class BadRequestError(APIError):
    """400: malformed JSON, unknown fields, missing scope, invalid input."""


class AuthenticationError(APIError):
    """401: no API key, or one the server does not know."""


class PermissionDeniedError(APIError):
    """403: the key may not use this user id (or a refused origin or host)."""


class NotFoundError(APIError):
    """404: no such turn, event, job, profile or route."""


class ConflictError(APIError):
    """409: a turn id is taken by a different turn."""


class TooLargeError(APIError):
    """413: a body, turn, batch or question over the server's limits."""


class RateLimitError(APIError):
    """429: the async job queue is full, or a rate limit was hit."""


class ServerError(APIError):
    """5xx: the server failed, has no LLM for the operation, or is stopping."""


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: TooLargeError,
    429: RateLimitError,
}


def error_for(status: int, code: Optional[str], message: str) -> APIError:
    """The exception for an error response."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    return cls(status, code, message)


class JobFailedError(HigmemError):
    """An async job ended in failure; ``job`` is its final state."""

    def __init__(self, job) -> None:  # job: Job
        self.job = job
        err = job.error
        self.code = err.code if err else None
        super().__init__(f"job {job.id} {job.status}: {err.code}: {err.message}" if err else f"job {job.id} {job.status}")


class ServerStartError(HigmemError):
    """The bundled server could not be started; the message holds its output."""
