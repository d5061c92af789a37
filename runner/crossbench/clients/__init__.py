"""The suite's own clients, for what no load generator does: holding thousands of idle keep-alive connections
(holder, seed 003), timing an instant request while the server is busy (probe, seed 000's head-of-line test),
and checking that a server answers every request of a pipelined batch (pipeline_check, seed 001)."""
