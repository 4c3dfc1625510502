"""What a person talks to: the report and the HTTP server (``/recommend``). They read a
finished run's output and the stages' helpers; the stages never import them."""
