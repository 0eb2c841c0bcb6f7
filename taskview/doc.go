// Package taskview folds wilco's event stream, as the HTTP API serves it,
// into what a watcher knows of each task — its state and phase, its
// attempt out of the hard stop, its last milestone, when it started and
// ended — and says in one line what each event did. `wilco watch` and
// `wilco run` print it.
//
// The events' data are read into core's event types: their json tags are
// the wire form of the event stream, so the fields are written once. Data
// that do not decode — a field of another type, a payload that is no JSON
// — leave what could not be read empty: an event never makes the fold
// fail.
//
// It is the client side of the event stream: it imports the API's bodies
// (package wire) and core's event types, and nothing in it talks to a
// server.
package taskview
