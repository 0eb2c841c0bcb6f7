#!/bin/sh
# crash_same.sh — a stand-in for an agent CLI that crashes the same way at
# every start, before any ACK.
echo 'fatal error: out of memory allocating heap arena map'
echo 'runtime stack:'
exit 134
