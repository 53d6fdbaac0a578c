"""mongomock made safe, quick and durable, for local runs and one-instance
deployments: the database, its journal, and the mongomock internals they
rely on (fenced)."""
