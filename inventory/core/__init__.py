"""The service's rules, with no flask and no pymongo in them: ids, versions,
labels, roles, lifecycles, filters, orderings, groupings, the service's
errors, every documented limit (caps) and what a resource declares (spec)."""
