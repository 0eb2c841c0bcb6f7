// Package retrylog keeps wilco's records on disk from the event stream:
// .wilco/logs/retry.log (for people) and .wilco/logs/retry.jsonl (for
// programs) in their documented formats, with retention (7 and 30 days by
// default), and .wilco/stuck/<task>.md for every hard stop.
//
// It is a reader of committed events: it decides nothing.
package retrylog
