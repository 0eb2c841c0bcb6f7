#!/bin/sh
# env_silent.sh — a scripted exec agent that never acknowledges: it writes
# a line to stderr and exits 0 without a word of the ACK protocol.
echo "warming up the model cache; nothing to say" >&2
exit 0
