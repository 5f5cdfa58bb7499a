from framework_core.app.entry import main

main()
