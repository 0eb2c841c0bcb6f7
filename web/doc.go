// Package web is wilco's page: a dashboard in the browser, served by
// `wilco serve` at / from files embedded in the binary (no build step, no
// network). It is hand-written JavaScript (ES modules, no framework) that
// reads wilco's HTTP API with the page's session cookie and stays current
// from the event stream; the server owns the routes (GET /, GET
// /ui/{file}) and the login, this package the files.
//
// Text that comes from agents — transcripts, messages, diffs, milestones —
// only ever reaches the page as text nodes: no file here parses a string
// as HTML (a test reads every script for it), and the Content-Security-
// Policy forbids inline scripts besides.
package web
