package forge

import (
	"fmt"
	"net/url"
	"strings"
)

// RepoFromRemote reads the host and the owner/name repository a git
// remote's URL names, in each form git takes: https://host/owner/name.git
// (with a user, a port, a path before the owner as a Gitea under a
// sub-path has), ssh://git@host:22/owner/name.git, git://host/owner/name,
// and scp's git@host:owner/name.git. The owner and name are the URL's
// last two path segments; a trailing .git and / are dropped.
func RepoFromRemote(remote string) (host string, repo Repo, err error) {
	bad := func(why string) error { return fmt.Errorf("%w: %q: %s", ErrBadRemote, redactURL(remote), why) }
	s := strings.TrimSpace(remote)
	var path string
	switch {
	case s == "":
		return "", Repo{}, bad("it is empty")
	case strings.Contains(s, "://"):
		u, perr := url.Parse(s)
		if perr != nil {
			return "", Repo{}, bad("not a URL")
		}
		switch u.Scheme {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		default:
			return "", Repo{}, bad("the scheme " + u.Scheme + " is no forge's")
		}
		host, path = u.Hostname(), u.Path
	default:
		// scp-like: [user@]host:path, where the host has no slash.
		before, after, ok := strings.Cut(s, ":")
		if !ok || strings.Contains(before, "/") {
			return "", Repo{}, bad("a local path names no forge")
		}
		if i := strings.LastIndexByte(before, '@'); i >= 0 {
			before = before[i+1:]
		}
		host, path = before, after
	}
	if host == "" {
		return "", Repo{}, bad("it has no host")
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	parts := strings.Split(path, "/")
	if len(parts) < 2 {
		return "", Repo{}, bad("its path is not owner/name")
	}
	repo = Repo{Owner: parts[len(parts)-2], Name: parts[len(parts)-1]}
	if !validPart(repo.Owner) || !validPart(repo.Name) {
		return "", Repo{}, bad("its path is not owner/name")
	}
	return host, repo, nil
}

// redactURL drops a URL's password (a token in a remote's URL) from what
// is shown.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}
