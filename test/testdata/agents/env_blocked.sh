#!/bin/sh
# env_blocked.sh — a scripted exec agent that reports it is blocked, with
# its reason, before it acknowledges anything, and exits 0.
echo "BLOCKED: the staging database is down"
exit 0
