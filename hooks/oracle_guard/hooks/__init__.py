"""The hooks, one module per hook id, each with main(argv) -> int."""
