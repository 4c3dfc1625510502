from postprocess.cli import main

raise SystemExit(main())
