"""Everything that speaks HTTP: the request pipeline, auth, rate limits,
idempotency, conditionals, continuation tokens, operations, OpenAPI,
errors, dumping, observability and the meta routes."""
