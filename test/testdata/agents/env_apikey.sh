#!/bin/sh
# env_apikey.sh — a scripted exec agent whose CLI is not logged in: it
# prints the error an agent CLI prints for a bad API key and exits 1.
echo "Invalid API key · Please run /login" >&2
exit 1
