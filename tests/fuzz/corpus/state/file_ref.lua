set{x = {file = "/nonexistent.npy"}}
