"""Headers every answer gets right: no `Content-Type` without a body, and
`Cache-Control: no-store` on an answer that holds a secret."""
from inventory.http.operations import current_operation


def finish_response(response):
    """after_request."""
    if response.status_code == 204:
        response.headers.pop("Content-Type", None)  # no body, so no type
    declared = current_operation()
    if declared is not None and declared.secret:  # no cache may keep the answer
        response.headers["Cache-Control"] = "no-store"
    return response
