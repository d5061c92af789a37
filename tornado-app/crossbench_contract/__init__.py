"""The endpoint contract's rules (runner/CONTRACT.md) that every Python server applies the same way: path
normalisation as Tomcat's connector does it, the `ms` rule, the served files, the text answers, the database
endpoints' query rule and JSON shapes. Standard library only; it lives in tornado-app/ (the first Python server)
and the gunicorn and uvicorn apps put this folder on their import path."""

TEXT_TYPE = "text/plain; charset=UTF-8"
JSON_TYPE = "application/json"
OK = b"OK"
HELLO = b"Hello, world"
