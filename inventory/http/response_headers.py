"""Headers every answer gets right: no `Content-Type` without a body, and
`Cache-Control: no-store` on an answer that holds a secret."""


def finish_response(passage, response):
    """The gate's way out (inventory.http.gate)."""
    if response.status_code == 204:
        response.headers.pop("Content-Type", None)  # no body, so no type
    declared = passage.operation
    if declared is not None and declared.secret:  # no cache may keep the answer
        response.headers["Cache-Control"] = "no-store"
    return response
