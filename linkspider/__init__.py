"""linkspider: crawl a whole site and record its pages and internal links to Parquet."""
