"""The OpenAPI schema's error answers (a drf-spectacular postprocessing hook).

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
- 413: a POST whose body is over the size limit (config/parsers.py).

An answer a view declares is kept. Live updates are WebSockets (games/consumers.py), outside
the HTTP schema.
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

WHY = {
    "400": "Refused: the body, a parameter or a cookie is malformed or not allowed (named).",
    "401": "Not signed in, or wrong credentials.",
    "403": "Not allowed to do this (a role, a seat), or the CSRF check of a signed-in session.",
    "404": "No such object (named).",
    "409": "Not now: the state of the object forbids it (named).",
    "413": "The body is larger than the limit (DATA_UPLOAD_MAX_MEMORY_SIZE).",
}


def document_errors(result: dict[str, Any], generator: Any, request: Any, public: Any
                    ) -> dict[str, Any]:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    error_ref = {"$ref": "#/components/schemas/Error"}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            codes = ["400", "401"]  # 401: wrong Basic credentials, on any operation
            if operation.get("security") and {} not in operation["security"]:
                codes.append("403")
            if any(p.get("in") == "path" or p.get("name") == "format" for p in parameters):
                codes.append("404")
            if method == "post":
                codes += ["409", "413"]
            content = {"application/json": {"schema": error_ref}}
            for code in codes:
                responses.setdefault(code, {"description": WHY[code]})
            for code, answer in responses.items():  # a view's declared refusals too
                if code in WHY and not answer.get("content"):
                    answer["content"] = content
    return result
