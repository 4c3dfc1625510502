"""What editors decided about suggestions: kept in SQLite, outside any run's output folder."""
