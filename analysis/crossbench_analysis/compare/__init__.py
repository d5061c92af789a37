"""Two runs (or two variants of one run) compared: the comparison's shape (comparison), its statistics
(compare_stats), compare and compare_within, the output (compare_render) and the A/A check of compare itself (aa).
May import read/, judge/, charts/ and report/ (the pages)."""
