"""The pipeline's stages, one module each: load → embed → index → candidates (lexical,
scoring) → anchors (passages) → confidence. They import the crawl contract
(``linkspider.items``) and each other downstream only; never ``evaluation`` or ``apps``."""
