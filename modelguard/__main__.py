from modelguard.cli import main

raise SystemExit(main())
