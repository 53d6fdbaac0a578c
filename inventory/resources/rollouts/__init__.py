"""The rollouts resource: spec.py declares it, store.py keeps its data, views.py serves it."""
