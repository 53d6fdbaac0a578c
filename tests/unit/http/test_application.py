"""The Flask class (inventory/http/application.py)."""


def test_the_application_asks_once_whether_a_function_is_a_coroutine(monkeypatch,
                                                                   coroutine_answers):
    """Application.ensure_sync keeps the answer per function (a bound
    method's function), still wraps a coroutine function, and stays bounded."""
    import inspect

    from inventory.http.application import Application

    application = Application(__name__)
    asked = []
    original = inspect.iscoroutinefunction
    monkeypatch.setattr(inspect, "iscoroutinefunction",
                        lambda func: asked.append(func) or original(func))

    class View:
        def get(self):
            return "ok"

    def hook():
        return None
    for _ in range(3):
        assert application.ensure_sync(hook) is hook
        assert application.ensure_sync(View().get)() == "ok"
    assert len(asked) == 2

    async def later():
        return "done"
    monkeypatch.setattr(application, "async_to_sync", lambda func: ("wrapped", func))
    assert application.ensure_sync(later) == ("wrapped", later)
    for index in range(5000):
        application.ensure_sync(eval(f"lambda: {index}"))  # noqa: S307 - a new function each
    assert len(coroutine_answers(application)) <= 4096
