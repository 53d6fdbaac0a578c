"""Tests of inventory/ui/, module by module (a package: its modules share basenames with tests/api/'s)."""
