"""Connecting to the database: a real MongoDB when `MONGODB_URI` is set,
its calls guarded so that an outage is the service's Unavailable (a 503),
never pymongo's error; else the embedded store (inventory.embedded),
journaled to INVENTORY_DATA_DIR when that is set, else living and dying
with this process."""
import pymongo
import pymongo.collection
import pymongo.database
import pymongo.errors

from inventory.core.errors import Unavailable
from inventory.store.outages import Outage


class Guarded:
    """A pymongo database or collection whose calls raise the service's
    Unavailable, not pymongo's ConnectionFailure (server selection and
    network timeouts among them), when the database is away, noting the
    outage (`Outage`). `find` and `aggregate` answer a list, so that the
    cursor's reads happen inside the guard."""

    def __init__(self, target, outage=None):
        self._target = target
        self.outage = outage or Outage()

    @property
    def unguarded(self):
        """The pymongo object itself (the query-plan tests call explain())."""
        return self._target

    def __getitem__(self, name):
        return Guarded(self._target[name], self.outage)

    def __getattr__(self, name):
        attribute = getattr(self._target, name)
        if isinstance(attribute, pymongo.collection.Collection) and \
                isinstance(self._target, pymongo.collection.Collection):
            # pymongo answers any name it lacks with a sub-collection
            # (`<name>.uncopied`): on a collection, that is never what was meant
            raise AttributeError(f"A collection has no attribute {name!r} (pymongo would "
                                 f"answer the sub-collection {attribute.name!r}).")
        if isinstance(attribute, (pymongo.collection.Collection, pymongo.database.Database)):
            return Guarded(attribute, self.outage)
        if not callable(attribute) or name == "client":
            return attribute

        def guarded(*args, **kwargs):
            try:
                answer = attribute(*args, **kwargs)
                answer = list(answer) if name in ("find", "aggregate") else answer
            except pymongo.errors.ConnectionFailure as error:
                self.outage.failed(error)
                raise Unavailable() from error
            except pymongo.errors.OperationFailure:  # the server's own refusal: it answers
                self.outage.answered()
                raise
            self.outage.answered()
            return answer
        return guarded


def connect(config):
    """The database named by the config; the client is safe to fork with."""
    if config.MONGODB_URI:
        # connect=False: no sockets before gunicorn forks its workers.
        # Short timeouts: an unreachable database answers 503 in seconds, not 30.
        timeout = config.MONGODB_TIMEOUT_MS
        client = pymongo.MongoClient(
            config.MONGODB_URI, connect=False, appname="cluster-inventory",
            serverSelectionTimeoutMS=timeout, connectTimeoutMS=timeout,
            socketTimeoutMS=2 * timeout)
        # MONGODB_DB wins over the URI's own database: the tests rely on it
        # to work in a throwaway database whatever the URI names.
        if config.MONGODB_DB:
            return Guarded(client[config.MONGODB_DB])
        return Guarded(client.get_default_database(default="inventory"))
    from inventory.embedded.database import embedded_database

    # serving, the replayed store is warmed after the start (init_app), in turns
    return embedded_database(config.MONGODB_DB or "inventory",
                             config.INVENTORY_DATA_DIR if config.journaled else None,
                             config.INVENTORY_FSYNC, warm=not config.ANNOUNCE)
