from framework_core.entry import main

main()
