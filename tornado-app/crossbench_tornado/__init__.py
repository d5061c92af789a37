"""The Tornado side of crossbench: the same endpoints as the servlet WAR, in Tornado's natural style."""
