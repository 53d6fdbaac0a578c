"""Benchmarks: figures and ratios against baselines in the same run (docs/performance.md)."""
import os


def report(name, text, append):
    """Print a bench's table and write it to bench/<name>.txt: in place of
    what it held, or with `append` after it."""
    print(text)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.txt")
    with open(path, "a" if append else "w") as out:
        out.write(("\n" if append else "") + text)
