// Package retrylog keeps wilco's records on disk from the event stream:
// .wilco/logs/retry.log (for people) and .wilco/logs/retry.jsonl (for
// programs) in their documented formats, with retention (7 and 30 days by
// default), and .wilco/stuck/<task>.md for every hard stop.
//
// Its Formatter is the one place that decides the text and fields of each
// kind of record: those of tasks, which the files hold, and those of
// deliveries and operation reminders, which `wilco logs` makes from the
// event log too.
//
// It is a reader of committed events: it decides nothing.
package retrylog
