"""UIManager: everything terminal. Renders core events; asks for approvals; runs the REPL."""
