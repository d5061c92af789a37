"""The endpoint contract's rules (runner/CONTRACT.md) that every Python server applies the same way: path
normalisation as Tomcat's connector does it, the `ms` rule, the served files, the text answers, the database
endpoints' query rule and JSON shapes. Standard library only; a package of its own (python-contract/), installed
into the project's environment by runner/python-env.sh like any other."""

TEXT_TYPE = "text/plain; charset=UTF-8"
JSON_TYPE = "application/json"
OK = b"OK"
HELLO = b"Hello, world"
