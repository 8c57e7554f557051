from symgen.cli import main

main()
