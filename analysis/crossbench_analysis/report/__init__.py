"""The pages: the Jinja2 environment (pages), report.html (report) and the measured sections of the docs from
committed reference results (reference). May import read/, judge/ and charts/."""
