"""Pure permission policy: classify commands, match rules, decide. No I/O beyond reading rule files."""
