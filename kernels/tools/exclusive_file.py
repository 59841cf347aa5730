"""Result files are never overwritten, as in the C++ harness (ExclusiveFile): FILE, then FILE.1, FILE.2, ..."""


def open_exclusive(path):
    """Opens the first free name of path, path.1, path.2, ... for writing; returns (handle, name)."""
    for suffix in range(10000):
        candidate = path if suffix == 0 else f"{path}.{suffix}"
        try:
            return open(candidate, "x"), candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"no free name for {path}")
