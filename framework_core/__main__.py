from framework_core.cli import main

main()
