"""A fake OpenAI-compatible HTTP server for tests (standard library only).

The official ``openai`` client (3.x) talks through its own HTTP stack
(``httpx2``), so transport-mocking libraries cannot intercept it; this module
runs a real HTTP server on ``127.0.0.1`` (a free port) in a background thread
and lets a test script what the "judge" answers.

Typical use (the ``fake_openai`` pytest fixture in ``conftest.py`` yields a
started :class:`FakeOpenAI` and closes it afterwards)::

    from fake_openai import Reply

    def test_something(fake_openai):
        fake_openai.enqueue(Reply.json({"score": 1}), Reply.truncated('{"sco'))
        client = openai.OpenAI(base_url=fake_openai.base_url, api_key="test-key", max_retries=0)
        ...
        assert fake_openai.chat_call_count == 2
        assert "reference answer" in fake_openai.last_prompt_text()
        assert fake_openai.last_api_key() == "test-key"

Endpoints:

* ``POST /v1/chat/completions`` -- answers with the next scripted :class:`Reply`
  (FIFO queue), else with ``responder(request_json)``, else a 500 error saying
  the fake has no scripted reply (sent with ``x-should-retry: false`` so the
  client does not retry and the test fails at once).
* ``GET /v1/models`` and ``GET /v1/models/{id}`` -- the known model ids.
* ``POST /v1/files`` (multipart upload), ``GET /v1/files/{id}`` and
  ``GET /v1/files/{id}/content`` -- files kept in memory.
* ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``
  -- OpenAI's Batch API over chat completions: a batch stays ``in_progress`` for
  :attr:`FakeOpenAI.batch_polls` retrievals, then every line is answered as a live
  chat request would be (queue, then responder) into an output file (200s) and an
  error file (error replies). :meth:`FakeOpenAI.plan_batches` scripts a batch that
  expires part-way or fails as a whole. Batch lines are kept in
  :attr:`FakeOpenAI.batch_lines`, not in the chat records.
* anything else -- 404 in OpenAI's error shape
  ``{"error": {"message", "type", "param", "code"}}``.

Every response carries an ``x-request-id`` header. Every request, whatever the
path or outcome, is recorded in :attr:`FakeOpenAI.requests`.
"""

from __future__ import annotations

import collections
import dataclasses
import email.parser
import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "Reply", "RecordedRequest", "Responder", "BatchPlan", "DEFAULT_MODELS"]

DEFAULT_MODELS: tuple[str, ...] = ("gpt-4o-mini", "fake-judge")

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
FILES_PATH = "/v1/files"
BATCHES_PATH = "/v1/batches"
EXPIRED_LINE_MESSAGE = "This request could not be executed before the completion window expired."

JSON_SCHEMA_UNSUPPORTED_MESSAGE = (
    "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. "
    "Learn more about supported models at the Structured Outputs guide: "
    "https://platform.openai.com/docs/guides/structured-outputs"
)


def _default_error_type(status: int) -> str:
    if status == 429:
        return "requests"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Reply:
    """One scripted answer of the fake server. Build it with the class methods.

    Attributes:
        kind: ``"completion"`` (a chat.completion body), ``"error"`` (an OpenAI
            error body), ``"raw"`` (``raw_body`` as is) or ``"disconnect"``
            (close the connection without answering).
        status: HTTP status code.
        text: ``choices[0].message.content`` (None = JSON null).
        refusal_text: ``choices[0].message.refusal``.
        finish_reason: ``choices[0].finish_reason``.
        model: the ``model`` to report; None echoes the requested model.
        usage: overrides of the usage fields, e.g. ``{"prompt_tokens": 7}``.
        error_message / error_type / error_code / error_param: the error body fields.
        headers: extra response headers (e.g. ``{"Retry-After": "0.1"}``).
        delay: seconds to wait before answering (a delayed reply never blocks
            other requests: every connection has its own thread).
        raw_body / content_type: the body of a ``"raw"`` reply.
    """

    kind: str = "completion"
    status: int = 200
    text: str | None = None
    refusal_text: str | None = None
    finish_reason: str = "stop"
    model: str | None = None
    usage: Mapping[str, int] | None = None
    error_message: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    error_param: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw_body: bytes = b""
    content_type: str = "application/json"

    # ---- successful chat completions

    @classmethod
    def content(cls, text: str | None, *, finish_reason: str = "stop", **kw: Any) -> Reply:
        """Raw assistant text as is: fenced ```json blocks, malformed JSON, ``NaN``..."""
        return cls(kind="completion", text=text, finish_reason=finish_reason, **kw)

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        """Assistant content = ``json.dumps(obj)`` (NaN/Infinity floats are written as such)."""
        return cls.content(json.dumps(obj), **kw)

    @classmethod
    def refusal(cls, text: str = "I'm sorry, I can't help with that.", **kw: Any) -> Reply:
        """``message.content`` null, ``message.refusal`` = text, finish_reason ``"stop"``."""
        return cls(kind="completion", text=None, refusal_text=text, finish_reason="stop", **kw)

    @classmethod
    def truncated(cls, text: str, **kw: Any) -> Reply:
        """The reply was cut by the token limit: finish_reason ``"length"``."""
        return cls.content(text, finish_reason="length", **kw)

    @classmethod
    def content_filter(cls, text: str | None = None, **kw: Any) -> Reply:
        """finish_reason ``"content_filter"`` (content null unless ``text`` is given)."""
        return cls.content(text, finish_reason="content_filter", **kw)

    # ---- errors

    @classmethod
    def error(
        cls,
        status: int,
        message: str,
        code: str | None = None,
        type: str | None = None,  # noqa: A002 - mirrors OpenAI's field name
        headers: Mapping[str, str] | None = None,
        *,
        param: str | None = None,
        should_retry: bool | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """An OpenAI error: ``{"error": {"message", "type", "param", "code"}}`` with ``status``.

        ``type`` defaults by status (429 ``"requests"``, 5xx ``"server_error"``,
        else ``"invalid_request_error"``). ``should_retry`` sets the
        ``x-should-retry`` header the openai client obeys.
        """
        hdrs = dict(headers or {})
        if should_retry is not None:
            hdrs["x-should-retry"] = "true" if should_retry else "false"
        return cls(
            kind="error",
            status=status,
            error_message=message,
            error_type=type if type is not None else _default_error_type(status),
            error_code=code,
            error_param=param,
            headers=hdrs,
            delay=delay,
        )

    @classmethod
    def rate_limited(
        cls, retry_after: float | None = 0.1, message: str = "Rate limit reached for requests", **kw: Any
    ) -> Reply:
        """429 ``rate_limit_exceeded`` with ``Retry-After: <retry_after>`` (omitted when None)."""
        headers = dict(kw.pop("headers", None) or {})
        if retry_after is not None:
            headers.setdefault("Retry-After", format(retry_after, "g"))
        return cls.error(429, message, code="rate_limit_exceeded", type="requests", headers=headers, **kw)

    @classmethod
    def server_error(cls, message: str = "The server had an error while processing your request.", **kw: Any) -> Reply:
        """500 ``server_error``."""
        return cls.error(500, message, type="server_error", **kw)

    @classmethod
    def context_length_exceeded(cls, max_tokens: int = 128000, requested: int = 130000, **kw: Any) -> Reply:
        """400 ``context_length_exceeded`` (param ``"messages"``), as OpenAI words it."""
        message = (
            f"This model's maximum context length is {max_tokens} tokens. However, your messages "
            f"resulted in {requested} tokens. Please reduce the length of the messages."
        )
        return cls.error(400, message, code="context_length_exceeded", param="messages", **kw)

    @classmethod
    def json_schema_unsupported(cls, **kw: Any) -> Reply:
        """400 rejecting ``response_format`` of type ``json_schema``."""
        return cls.error(400, JSON_SCHEMA_UNSUPPORTED_MESSAGE, param="response_format", **kw)

    @classmethod
    def invalid_api_key(cls, key: str = "test-key", **kw: Any) -> Reply:
        """401 ``invalid_api_key``."""
        return cls.error(401, _incorrect_key_message(key), code="invalid_api_key", **kw)

    # ---- transport-level behaviour

    @classmethod
    def sleep(cls, seconds: float, then: Reply | None = None) -> Reply:
        """Wait ``seconds`` before answering with ``then`` (default: an empty assistant message)."""
        return dataclasses.replace(then if then is not None else cls.content(""), delay=seconds)

    @classmethod
    def raw(
        cls,
        status: int,
        body: bytes | str | Any,
        *,
        headers: Mapping[str, str] | None = None,
        content_type: str | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """Send ``body`` verbatim (str/bytes) or as JSON (anything else), e.g. an HTML 502 page."""
        if isinstance(body, str):
            data, ctype = body.encode("utf-8"), "text/plain; charset=utf-8"
        elif isinstance(body, (bytes, bytearray)):
            data, ctype = bytes(body), "application/octet-stream"
        else:
            data, ctype = json.dumps(body).encode("utf-8"), "application/json"
        return cls(
            kind="raw",
            status=status,
            raw_body=data,
            content_type=content_type or ctype,
            headers=dict(headers or {}),
            delay=delay,
        )

    @classmethod
    def disconnect(cls, delay: float = 0.0) -> Reply:
        """Close the connection without sending a response (the client sees a connection error)."""
        return cls(kind="disconnect", status=0, delay=delay)

    def delayed(self, seconds: float) -> Reply:
        """This reply, sent after ``seconds``."""
        return dataclasses.replace(self, delay=seconds)


def _incorrect_key_message(key: str) -> str:
    masked = f"{key[:3]}{'*' * 10}{key[-4:]}" if len(key) > 8 else key
    return (
        f"Incorrect API key provided: {masked}. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )


Responder = Callable[[dict], Reply]


@dataclass(frozen=True)
class BatchPlan:
    """How the fake ends one batch (consumed in creation order; unplanned batches complete).

    Attributes:
        expire_after: answer only the first N lines, then end the batch ``expired``: the
            other lines go to the error file with code ``batch_expired``, as OpenAI does.
        fail: end the batch ``failed`` with this validation message; no line is answered.
    """

    expire_after: int | None = None
    fail: str | None = None


# --------------------------------------------------------------------------- records


@dataclass
class RecordedRequest:
    """A request the fake received.

    Attributes:
        method: ``"GET"``, ``"POST"``...
        path: the path without the query string, e.g. ``"/v1/chat/completions"``.
        query: the raw query string ("" when none).
        headers: the request headers with lower-cased names.
        body: the parsed JSON body, or None (no body / not JSON).
        raw_body: the body bytes.
        status: the status code answered (0 until answered or on a disconnect).
        reply: the :class:`Reply` used, for chat completions.
        time: ``time.monotonic()`` when the request arrived.
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    raw_body: bytes
    status: int = 0
    reply: Reply | None = None
    time: float = 0.0

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)

    @property
    def api_key(self) -> str | None:
        """The bearer token of the ``Authorization`` header, or None."""
        auth = self.headers.get("authorization")
        if auth is None:
            return None
        scheme, _, token = auth.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else auth

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path.rstrip("/") == CHAT_PATH


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _prompt_chars(body: Any) -> int:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return 0
    return sum(len(_message_text(m)) for m in messages)


# --------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never join handler threads on close (a delayed reply may still sleep)
    allow_reuse_address = True
    request_queue_size = 128  # many clients connecting at once (the default backlog of 5 drops some)
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet (no traceback on stderr), but a non-socket exception is kept in ``fake.errors``."""
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, OSError):  # OSError: client went away, timeouts
            self.fake._record_error(exc)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "FakeOpenAI/1.0"

    def setup(self) -> None:
        self.timeout = self.server.fake.socket_timeout  # StreamRequestHandler applies it to the socket
        super().setup()
        try:  # headers and body are separate writes: avoid Nagle + delayed-ACK stalls (~40 ms)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.server.fake._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        return

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    # ---- plumbing

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline(65537)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self) -> None:
        fake = self.server.fake
        try:
            raw = self._read_body()
            path, _, query = self.path.partition("?")
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            record = RecordedRequest(
                method=self.command,
                path=path,
                query=query,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw_body=raw,
                time=time.monotonic(),
            )
            fake._record(record)
            reply = fake._route(record)
            record.reply = reply
            self._send(reply, record)
        except (TimeoutError, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        except Exception as exc:  # a bug in the fake or a responder: answer 500, never hang
            fake._record_error(exc)
            self.close_connection = True
            try:
                self._send(fake._fake_error(500, f"FakeOpenAI internal error: {exc!r}"), None)
            except OSError:
                pass

    def _send(self, reply: Reply, record: RecordedRequest | None) -> None:
        fake = self.server.fake
        if reply.delay > 0 and fake._stopping.wait(reply.delay):
            self.close_connection = True  # the server is closing: drop the request
            return
        if reply.kind == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        data, content_type = fake._render(reply, record)
        if record is not None:
            record.status = reply.status
        self.send_response(reply.status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", fake._next_request_id())
        self.send_header("openai-processing-ms", "1")
        for name, value in reply.headers.items():
            self.send_header(name, str(value))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


class FakeOpenAI:
    """A fake OpenAI-compatible server on ``127.0.0.1`` (free port), in a daemon thread.

    Args:
        replies: scripted replies, consumed one per chat completion request (FIFO).
        responder: ``(request_json) -> Reply`` used when the queue is empty.
        models: the model ids ``GET /v1/models`` lists.
        api_key: when set, chat/models requests with another bearer key get a 401
            ``invalid_api_key`` (missing key: 401 too); None accepts any key.
        reject_unknown_models: answer chat requests for a model not in ``models``
            with a 404 ``model_not_found``, like OpenAI.
        socket_timeout: per-connection socket timeout in seconds (idle keep-alive
            connections and stalled clients never hold a thread longer).

    Use as a context manager (``with FakeOpenAI() as server:``) or call
    :meth:`start` / :meth:`close`.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        models: Iterable[str] = DEFAULT_MODELS,
        api_key: str | None = None,
        reject_unknown_models: bool = False,
        socket_timeout: float = 5.0,
    ) -> None:
        self.responder: Responder | None = responder
        self.models: list[str] = list(models)
        self.api_key = api_key
        self.reject_unknown_models = reject_unknown_models
        self.socket_timeout = socket_timeout
        self.errors: list[BaseException] = []  # exceptions raised by a responder / the fake itself

        self._lock = threading.Lock()
        self._queue: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._request_ids = itertools.count(1)
        self._completion_ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.batch_polls = 1  # retrievals a batch stays in_progress before it is processed
        self.batch_lines: list[dict] = []  # every batch input line processed, in order
        self._files: dict[str, dict[str, Any]] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._plans: collections.deque[BatchPlan] = collections.deque()
        self._ids = itertools.count(1)
        self.host = "127.0.0.1"
        self.port: int | None = None
        self.enqueue(*replies)

    # ---- lifecycle

    def start(self) -> FakeOpenAI:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread; returns self."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self.host, 0), _Handler)
        server.fake = self
        server.timeout = 0.5
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.01}, name=f"FakeOpenAI:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake delayed replies, drop open connections. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        with self._lock:
            conns = list(self._connections)
            self._connections.clear()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None

    stop = close

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        if self.port is None:
            raise RuntimeError("FakeOpenAI is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to give a client: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    def client(self, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client for this server (``api_key="test-key"``, ``max_retries=0``,
        ``timeout=5`` unless given). Imports openai lazily: the server itself is stdlib only."""
        import openai

        kwargs.setdefault("api_key", self.api_key or "test-key")
        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("timeout", 5.0)
        return openai.OpenAI(base_url=self.base_url, **kwargs)

    # ---- scripting

    def enqueue(self, *replies: Reply) -> FakeOpenAI:
        """Append replies to the FIFO queue (one is consumed per chat request); returns self."""
        for reply in replies:
            if not isinstance(reply, Reply):
                raise TypeError(f"expected a Reply, got {type(reply).__name__}: {reply!r}")
        with self._lock:
            self._queue.extend(replies)
        return self

    add = enqueue

    @property
    def pending_replies(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    def assert_all_replies_used(self) -> None:
        pending = self.pending_replies
        assert pending == 0, f"FakeOpenAI: {pending} scripted repl{'y' if pending == 1 else 'ies'} never requested"

    def reset(self) -> None:
        """Forget recorded requests, errors and queued replies (keeps responder and models)."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self.errors.clear()

    def plan_batches(self, *plans: BatchPlan) -> FakeOpenAI:
        """Script how the next batches end (one plan per batch created, in order); returns self."""
        with self._lock:
            self._plans.extend(plans)
        return self

    # ---- inspection

    @property
    def batches(self) -> list[dict[str, Any]]:
        """Every batch created (OpenAI's Batch objects as dicts), in creation order."""
        with self._lock:
            return [self._batch_obj(b) for b in self._batches.values()]

    def file_text(self, file_id: str) -> str:
        """The content of an uploaded or produced file."""
        with self._lock:
            return self._files[file_id]["data"].decode("utf-8")

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot (copy) of every recorded request, in arrival order."""
        with self._lock:
            return list(self._requests)

    def chat_records(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/chat/completions`` requests."""
        return [r for r in self.requests if r.is_chat]

    def chat_requests(self) -> list[Any]:
        """The JSON bodies of the ``POST /v1/chat/completions`` requests, in order."""
        return [r.body for r in self.chat_records()]

    @property
    def chat_call_count(self) -> int:
        """How many chat completion requests were received (retries and errors included)."""
        return len(self.chat_records())

    def last_chat_request(self) -> Any:
        """The JSON body of the last chat completion request (AssertionError if none)."""
        bodies = self.chat_requests()
        assert bodies, "FakeOpenAI: no chat completion request was received"
        return bodies[-1]

    def prompt_text(self, index: int = -1, sep: str = "\n") -> str:
        """All message contents of chat request ``index`` joined by ``sep``."""
        bodies = self.chat_requests()
        assert bodies, "FakeOpenAI: no chat completion request was received"
        body = bodies[index]
        messages = body.get("messages") if isinstance(body, dict) else None
        return sep.join(_message_text(m) for m in (messages or []))

    def last_prompt_text(self, sep: str = "\n") -> str:
        """All message contents of the last chat request joined by ``sep``."""
        return self.prompt_text(-1, sep)

    def api_keys(self) -> list[str | None]:
        """The bearer key of every recorded request (None where no Authorization header was sent)."""
        return [r.api_key for r in self.requests]

    def last_api_key(self) -> str | None:
        reqs = self.requests
        assert reqs, "FakeOpenAI: no request was received"
        return reqs[-1].api_key

    # ---- internals used by the handler

    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)

    def _next_request_id(self) -> str:
        return f"req_fake{next(self._request_ids):08d}"

    @staticmethod
    def _fake_error(status: int, message: str) -> Reply:
        # ``x-should-retry: false``: the openai client must not retry a fake-side problem.
        return Reply.error(status, message, type="fake_openai_error", should_retry=False)

    def _check_key(self, record: RecordedRequest) -> Reply | None:
        if self.api_key is None:
            return None
        key = record.api_key
        if not key:
            return Reply.error(
                401,
                "You didn't provide an API key. You need to provide your API key in an Authorization header "
                "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        if key != self.api_key:
            return Reply.invalid_api_key(key)
        return None

    def _route(self, record: RecordedRequest) -> Reply:
        path = record.path.rstrip("/") or "/"
        if record.method == "POST" and path == CHAT_PATH:
            return self._chat(record)
        if record.method == "GET" and (path == MODELS_PATH or path.startswith(MODELS_PATH + "/")):
            denied = self._check_key(record)
            if denied is not None:
                return denied
            if path == MODELS_PATH:
                return Reply.raw(200, {"object": "list", "data": [self._model_obj(m) for m in self.models]})
            model_id = path[len(MODELS_PATH) + 1 :]
            if model_id in self.models:
                return Reply.raw(200, self._model_obj(model_id))
            return Reply.error(404, f"The model '{model_id}' does not exist", code="model_not_found", param="model")
        if path == FILES_PATH or path.startswith(FILES_PATH + "/") or path.startswith(BATCHES_PATH):
            return self._check_key(record) or self._batch_api(record, path)
        return Reply.error(404, f"Invalid URL ({record.method} {record.path})")

    # ---- files and batches

    def _batch_api(self, record: RecordedRequest, path: str) -> Reply:
        parts = path.split("/")[2:]  # ["files", id?, "content"?] or ["batches", id?, "cancel"?]
        if record.method == "POST" and parts == ["files"]:
            return self._upload(record)
        if record.method == "POST" and parts == ["batches"]:
            return self._create_batch(record)
        with self._lock:
            if parts[0] == "files" and len(parts) >= 2 and parts[1] in self._files:
                file = self._files[parts[1]]
                if record.method == "GET" and len(parts) == 2:
                    return Reply.raw(200, self._file_obj(file))
                if record.method == "GET" and parts[2:] == ["content"]:
                    return Reply.raw(200, file["data"], content_type="application/octet-stream")
            if parts[0] == "batches" and len(parts) >= 2 and parts[1] in self._batches:
                batch = self._batches[parts[1]]
                if record.method == "GET" and len(parts) == 2:
                    self._advance(batch, record)
                    return Reply.raw(200, self._batch_obj(batch))
                if record.method == "POST" and parts[2:] == ["cancel"]:
                    if batch["status"] in ("validating", "in_progress"):
                        batch.update(status="cancelled", cancelled_at=int(time.time()))
                    return Reply.raw(200, self._batch_obj(batch))
        return Reply.error(404, f"No such object: {record.method} {record.path}")

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-fake{next(self._ids):06d}"

    def _store_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file = {"id": self._new_id("file"), "data": data, "filename": filename, "purpose": purpose}
        file["created_at"] = int(time.time())
        with self._lock:
            self._files[file["id"]] = file
        return file

    @staticmethod
    def _file_obj(file: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": file["id"],
            "object": "file",
            "bytes": len(file["data"]),
            "created_at": file["created_at"],
            "filename": file["filename"],
            "purpose": file["purpose"],
            "status": "processed",
        }

    def _upload(self, record: RecordedRequest) -> Reply:
        content_type = record.header("content-type", "")
        message = email.parser.BytesParser().parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + record.raw_body
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.get_payload() if message.is_multipart() else []:
            fields[part.get_param("name", header="content-disposition")] = (
                part.get_filename(),
                part.get_payload(decode=True),
            )
        if "file" not in fields or "purpose" not in fields:
            return Reply.error(400, "Missing required parameter: 'file' and 'purpose' are required.")
        filename, data = fields["file"]
        file = self._store_file(data, filename or "upload.jsonl", fields["purpose"][1].decode())
        return Reply.raw(200, self._file_obj(file))

    def _create_batch(self, record: RecordedRequest) -> Reply:
        body = record.body if isinstance(record.body, dict) else {}
        with self._lock:
            file = self._files.get(body.get("input_file_id", ""))
            plan = self._plans.popleft() if self._plans and file is not None else BatchPlan()
        if file is None:
            return Reply.error(400, f"No such file: {body.get('input_file_id')!r}", param="input_file_id")
        if body.get("endpoint") != CHAT_PATH:
            return Reply.error(400, "FakeOpenAI batches only support /v1/chat/completions", param="endpoint")
        lines = [line for line in file["data"].decode("utf-8").splitlines() if line.strip()]
        now = int(time.time())
        batch = {
            "id": self._new_id("batch"),
            "object": "batch",
            "endpoint": CHAT_PATH,
            "errors": None,
            "input_file_id": file["id"],
            "completion_window": body.get("completion_window", "24h"),
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "expires_at": now + 86400,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
            "_polls": 0,
            "_plan": plan,
            "_lines": lines,
        }
        with self._lock:
            self._batches[batch["id"]] = batch
        return Reply.raw(200, self._batch_obj(batch))

    @staticmethod
    def _batch_obj(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _advance(self, batch: dict[str, Any], record: RecordedRequest) -> None:
        """One retrieval: validating -> in_progress, then after ``batch_polls`` retrievals, the end. Holds the lock."""
        if batch["status"] not in ("validating", "in_progress"):
            return
        batch["status"] = "in_progress"
        batch["_polls"] += 1
        if batch["_polls"] <= self.batch_polls:
            return
        plan: BatchPlan = batch["_plan"]
        now = int(time.time())
        if plan.fail is not None:
            batch.update(status="failed", failed_at=now)
            batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": plan.fail}]}
            return
        batch["status"] = "finalizing"  # a concurrent retrieval sees it and does not answer the lines again
        self._lock.release()  # answering lines takes the lock and may call the responder
        try:
            output, errors = self._answer_lines(batch["_lines"], plan, record)
        finally:
            self._lock.acquire()
        counts = batch["request_counts"]
        counts["failed"] = len(errors)
        counts["completed"] = len(output)
        if output:
            batch["output_file_id"] = self._add_file_locked("\n".join(output) + "\n", "batch_output")
        if errors:
            batch["error_file_id"] = self._add_file_locked("\n".join(errors) + "\n", "batch_output")
        if plan.expire_after is not None:
            batch.update(status="expired", expired_at=now)
        else:
            batch.update(status="completed", completed_at=now)

    def _add_file_locked(self, text: str, purpose: str) -> str:
        file = {"id": self._new_id("file"), "data": text.encode(), "filename": "batch_output.jsonl"}
        file.update(purpose=purpose, created_at=int(time.time()))
        self._files[file["id"]] = file
        return file["id"]

    def _answer_lines(self, lines: list[str], plan: BatchPlan, record: RecordedRequest) -> tuple[list[str], list[str]]:
        output: list[str] = []
        errors: list[str] = []
        for n, line in enumerate(lines):
            entry = json.loads(line)
            custom_id = entry.get("custom_id")
            out = {"id": self._new_id("batch_req"), "custom_id": custom_id, "response": None, "error": None}
            if plan.expire_after is not None and n >= plan.expire_after:
                out["error"] = {"code": "batch_expired", "message": EXPIRED_LINE_MESSAGE}
                errors.append(json.dumps(out))
                continue
            with self._lock:
                self.batch_lines.append(entry)
            line_record = dataclasses.replace(record, method="POST", path=CHAT_PATH, body=entry.get("body"))
            reply = self._chat(line_record)
            if reply.kind == "completion":
                body = self._completion(reply, entry.get("body") or {})
                out["response"] = {"status_code": 200, "request_id": self._next_request_id(), "body": body}
                output.append(json.dumps(out))
            else:
                data, _ = self._render(reply, line_record)
                status = reply.status or 500
                out["response"] = {
                    "status_code": status,
                    "request_id": self._next_request_id(),
                    "body": json.loads(data),
                }
                errors.append(json.dumps(out))
        return output, errors

    @staticmethod
    def _model_obj(model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": 1700000000, "owned_by": "fake-openai"}

    def _chat(self, record: RecordedRequest) -> Reply:
        denied = self._check_key(record)
        if denied is not None:
            return denied
        body = record.body
        if not isinstance(body, dict):
            return Reply.error(
                400,
                "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
                "your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was "
                "not valid JSON.)",
            )
        for required in ("model", "messages"):
            if required not in body:
                return Reply.error(
                    400,
                    f"Missing required parameter: '{required}'.",
                    code="missing_required_parameter",
                    param=required,
                )
        if body.get("stream"):
            return self._fake_error(400, "FakeOpenAI does not support stream=true")
        if self.reject_unknown_models and body.get("model") not in self.models:
            return Reply.error(
                404,
                f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                code="model_not_found",
            )
        with self._lock:
            reply = self._queue.popleft() if self._queue else None
        if reply is None:
            responder = self.responder
            if responder is None:
                return self._fake_error(
                    500,
                    "FakeOpenAI has no scripted reply for this chat completion request "
                    f"(request #{self.chat_call_count}, queue empty, no responder). "
                    f"Prompt starts: {self._prompt_head(body)!r}",
                )
            try:
                reply = responder(body)
            except Exception as exc:
                self._record_error(exc)
                return self._fake_error(500, f"FakeOpenAI responder raised {exc!r}")
            if not isinstance(reply, Reply):
                err = TypeError(f"FakeOpenAI responder returned {type(reply).__name__}, expected a Reply")
                self._record_error(err)
                return self._fake_error(500, str(err))
        return reply

    @staticmethod
    def _prompt_head(body: dict) -> str:
        messages = body.get("messages")
        text = "\n".join(_message_text(m) for m in messages) if isinstance(messages, list) else ""
        return text[:120]

    def _render(self, reply: Reply, record: RecordedRequest | None) -> tuple[bytes, str]:
        if reply.kind == "raw":
            return reply.raw_body, reply.content_type
        if reply.kind == "error":
            payload: dict[str, Any] = {
                "error": {
                    "message": reply.error_message or "",
                    "type": reply.error_type or _default_error_type(reply.status),
                    "param": reply.error_param,
                    "code": reply.error_code,
                }
            }
            return json.dumps(payload).encode("utf-8"), "application/json"
        body = record.body if record is not None and isinstance(record.body, dict) else {}
        return json.dumps(self._completion(reply, body)).encode("utf-8"), "application/json"

    def _completion(self, reply: Reply, request: dict) -> dict[str, Any]:
        answered = reply.text if reply.text is not None else (reply.refusal_text or "")
        prompt_tokens = _prompt_chars(request) // 4
        completion_tokens = len(answered) // 4 + 1
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if reply.usage:
            usage.update(reply.usage)
            if "total_tokens" not in reply.usage:
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        usage["prompt_tokens_details"] = {"cached_tokens": 0, "audio_tokens": 0}
        usage["completion_tokens_details"] = {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        }
        return {
            "id": f"chatcmpl-fake{next(self._completion_ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or request.get("model") or "fake-judge",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": reply.text,
                        "refusal": reply.refusal_text,
                        "annotations": [],
                    },
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": "fp_fake",
        }

    def __repr__(self) -> str:
        state = self.base_url if self.running else "stopped"
        return f"<FakeOpenAI {state} requests={len(self.requests)} pending={self.pending_replies}>"
