from assistant_bridge.cli import main

raise SystemExit(main())
