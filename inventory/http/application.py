"""The Flask application class of the service."""
import inspect

from flask import Flask, request

from inventory.http import actions


class Application(Flask):
    """Flask, asking once per function whether it is a coroutine function:
    Flask's `ensure_sync` asks `inspect` on every call of every hook, view
    and error handler (several times a request, about 3% of a single-record
    request). The service has no async views; one would still be wrapped.
    Its OPTIONS answers list the methods in one order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._coroutine_functions = {}

    def ensure_sync(self, func):
        key = getattr(func, "__func__", func)  # a view's bound method: its function
        try:
            is_coroutine = self._coroutine_functions[key]
        except KeyError:
            is_coroutine = inspect.iscoroutinefunction(func)
            if len(self._coroutine_functions) < 4096:  # bounded, should one be made per call
                self._coroutine_functions[key] = is_coroutine
        return self.async_to_sync(func) if is_coroutine else func

    def make_default_options_response(self):
        """Flask's answer to OPTIONS, its `Allow` sorted as a 405's is: Flask
        lists a set, whose order changes with each process's hash seed. An
        action's URL lists the action's methods only (inventory.http.actions)."""
        response = super().make_default_options_response()
        allowed = actions.methods_of(request.path) or response.allow
        response.headers["Allow"] = ", ".join(sorted(allowed))
        return response
