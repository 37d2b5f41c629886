from roost.entry import main

main()
