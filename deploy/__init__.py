"""Deploy tooling: the scheduled Scrapyd run (``scheduled_run.sh``) and its job waiting."""
