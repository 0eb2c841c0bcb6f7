#!/bin/sh
# refused_flag.sh — a stand-in for an agent CLI that refuses a flag of its
# command line, as Codex does with --full-auto: usage on stderr, exit 2.
echo "error: unexpected argument '--full-auto' found" >&2
echo "" >&2
echo "Usage: codex exec [OPTIONS] [PROMPT]" >&2
exit 2
