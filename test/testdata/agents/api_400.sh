#!/bin/sh
# api_400.sh — a stand-in for Claude Code when the model's API answers 400
# to every call: it prints the API's error and exits 1.
echo 'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 999999 > 64000, which is the maximum allowed"}}'
exit 1
