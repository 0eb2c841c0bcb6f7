// Package forge is wilco's client of the forges a repository lives on:
// GitHub (github.com and GitHub Enterprise, REST v3) and Gitea (and
// Forgejo, which speaks Gitea's API). One interface, Forge, with two
// implementations made by New: pull requests (open, find by head branch,
// get, merge, close), the checks of a commit (GitHub's check runs and
// combined statuses, Gitea's statuses) and the tail of a failed check's
// log, reviews and their line comments, issues by label and their
// comments, comments written, whether a user is a collaborator.
//
// Every call goes through one transport (transport.go): the token sent as
// the forge expects and never shown (not in an error, a String or a call
// reported), rate limits waited out (403 or 429 with X-RateLimit-Remaining
// 0 until X-RateLimit-Reset; Retry-After), 5xx answers and connection
// errors retried with backoff on an injectable clock, a context ending it
// all, and each call reported to an observer.
//
// Outside the API: the repository a remote's URL names (RepoFromRemote),
// and webhooks verified (X-Hub-Signature-256, X-Gitea-Signature) and
// decoded into Events (webhook.go).
package forge
