"""The OpenAPI schema's error answers and event streams (a drf-spectacular postprocessing hook).

Every refused request is answered ``{"error": code, "detail": message, …}`` (config.exceptions),
but drf-spectacular documents only the answers a view declares, so the schema listed none of
them: a client generated from it, or a tool that checks answers against it (schemathesis), met
400, 401, 403, 404 and 409 as undocumented. This hook documents them wherever they can
occur, erring on the side of listing one that a given operation rarely or never gives:

- 400 and 401: every operation (a body or parameter refused, malformed JSON, and anywhere a
  NUL character in the query or a cookie, config.middleware; wrong Basic credentials);
- 403: every operation that requires a signed-in person (a role, a seat, the CSRF check);
- 404: a path parameter (no such partie, hand, soirée, club, account), or a ``format``
  no renderer writes;
- 409: a POST (the state forbids it now: a stale seq, a hand over, a soirée already open), and
  what a view declares itself (a hand's record before the hand is over);
- 406: a stream asked for as JSON (``Accept`` or ``?format=json``), which has no JSON form.

An answer a view declares is kept. A server-sent-events stream (``text/event-stream``) is
described event by event (``event``, ``data`` holding JSON, ``id``, ``retry``). OpenAPI 3.0
says nothing of streams (3.2 adds ``itemSchema`` for an event); this is how schemathesis reads
a 3.0 stream's schema, and the operation's description says the body is a stream. Its refusals
come as one ``error`` event, or as JSON to a client that asks for JSON.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "description": "A refused request: a code, and a message that names the problem. A refused "
                   "field or parameter also has its own entry, with its messages.",
    "properties": {
        "error": {"type": "string", "description": "what kind of refusal, e.g. `invalid`, "
                                                   "`illegal_move`, `stale_sequence`"},
        "detail": {"description": "the message (a list of messages for some refusals)",
                   "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "rule": {"type": "string", "description": "an illegal move: the rule that forbids it"},
    },
    "required": ["error", "detail"],
    "additionalProperties": True,
}

EVENT_SCHEMA = {
    "type": "object",
    "description": "One server-sent event.",
    "properties": {
        "event": {"type": "string", "description": "`message` (the default) or `error`"},
        "data": {"type": "string", "description": "JSON: an announcement, or for an `error` "
                                                  "event the refusal (Error)"},
        "id": {"type": "string"},
        "retry": {"type": "integer", "minimum": 0},
    },
}

STREAM = "text/event-stream"

WHY = {
    "400": "Refused: the body, a parameter or a cookie is malformed or not allowed (named).",
    "401": "Not signed in, or wrong credentials.",
    "403": "Not allowed to do this (a role, a seat), or the CSRF check of a signed-in session.",
    "404": "No such object (named).",
    "409": "Not now: the state of the object forbids it (named).",
    "406": "A stream asked for as JSON: it is served only as text/event-stream.",
}


def document_errors(result: dict[str, Any], generator: Any, request: Any, public: Any
                    ) -> dict[str, Any]:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    schemas["ServerSentEvent"] = EVENT_SCHEMA
    error_ref = {"$ref": "#/components/schemas/Error"}
    event_ref = {"$ref": "#/components/schemas/ServerSentEvent"}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            streams = any(STREAM in (r.get("content") or {}) for r in responses.values())
            for answer in responses.values():  # a stream's schema is one event's
                if STREAM in (answer.get("content") or {}):
                    answer["content"][STREAM] = {"schema": event_ref}
            parameters = operation.get("parameters", [])
            codes = ["400", "401"]  # 401: wrong Basic credentials, on any operation
            if operation.get("security") and {} not in operation["security"]:
                codes.append("403")
            if any(p.get("in") == "path" or p.get("name") == "format" for p in parameters):
                codes.append("404")
            if method == "post":
                codes.append("409")
            if streams:
                codes.append("406")
            content = {"application/json": {"schema": error_ref}}
            if streams:
                content[STREAM] = {"schema": event_ref}
            for code in codes:
                responses.setdefault(code, {"description": WHY[code]})
            for code, answer in responses.items():  # a view's declared refusals too
                if code in WHY and not answer.get("content"):
                    answer["content"] = content
    return result
