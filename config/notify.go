package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"wilco/core"
)

// envRef is ${NAME} in a webhook's url or secret: the value of the
// environment variable NAME, so that wilco.yaml (committed with the
// repository) need not hold a secret.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces every ${NAME} of s with the environment's value; an
// unset or empty variable is an error that names it.
func expand(s string, getenv func(string) string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := envRef.FindStringSubmatch(m)[1]
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("the environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// Resolve returns the webhook's URL and secret with the environment
// variables they name (${NAME}) filled in.
func (w Webhook) Resolve() (rawURL, secret string, err error) {
	if rawURL, err = expand(w.URL, os.Getenv); err != nil {
		return "", "", fmt.Errorf("webhook %s: url: %w", w.Name, err)
	}
	if secret, err = expand(w.Secret, os.Getenv); err != nil {
		return "", "", fmt.Errorf("webhook %s: secret: %w", w.Name, err)
	}
	return rawURL, secret, nil
}

// checkHookURL checks an http(s) URL with a host.
func checkHookURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http:// or https:// URL such as https://hooks.example.com/wilco, got %q", s)
	}
	return nil
}

func (d *decoder) notify(n *yaml.Node, key string, c *Config) {
	nt := &c.Notify
	d.mapping(n, key, map[string]func(*yaml.Node, string){
		"webhooks": func(n *yaml.Node, k string) { d.webhooks(n, k, c) },
		"desktop":  func(n *yaml.Node, k string) { d.boolean(n, k, &nt.Desktop) },
		"base_url": func(n *yaml.Node, k string) {
			d.str(n, k, &nt.BaseURL)
			if n.Kind != yaml.ScalarNode {
				return
			}
			if err := checkHookURL(nt.BaseURL); err != nil {
				d.fail(n, k, "%v", err)
				return
			}
			nt.BaseURL = strings.TrimRight(nt.BaseURL, "/")
		},
		"retry": func(n *yaml.Node, k string) {
			r := &nt.Retry
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"max_attempts": func(n *yaml.Node, k string) { positiveInt(d, n, k, &r.MaxAttempts) },
				"backoff": func(n *yaml.Node, k string) {
					d.mapping(n, k, map[string]func(*yaml.Node, string){
						"base": func(n *yaml.Node, k string) { d.duration(n, k, &r.BackoffBase, true) },
						"max":  func(n *yaml.Node, k string) { d.duration(n, k, &r.BackoffMax, true) },
					})
				},
				"timeout": func(n *yaml.Node, k string) { d.duration(n, k, &r.Timeout, true) },
			})
		},
	})
}

func (d *decoder) webhooks(n *yaml.Node, key string, c *Config) {
	nt := &c.Notify
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "must be a list of webhooks such as [{url: https://hooks.example.com/wilco, secret: \"…\"}], got %s", describe(n))
		return
	}
	names := map[string]int{} // name → index
	for i, item := range n.Content {
		item = resolve(item)
		k := fmt.Sprintf("%s[%d]", key, i)
		d.lines[k] = item.Line
		if isNull(item) {
			d.fail(item, k, "must be a webhook (a mapping with url), got nothing")
			continue
		}
		w, set, ok := d.webhook(item, k)
		if !ok || !d.uniqueHookName(w, set, k, key, names) {
			continue
		}
		names[w.Name] = i
		if w.Secret == "" && w.Format == "json" {
			c.Warnings = append(c.Warnings, (&Error{File: d.file, Line: item.Line, Key: k + ".secret",
				Msg: "none: the notifications to " + w.Name + " are not signed (no X-Wilco-Signature), so its receiver cannot tell them from anyone's"}).Error())
		}
		nt.Webhooks = append(nt.Webhooks, w)
	}
}

// webhook decodes the webhook item at k: its keys, each key's node in set;
// ok is false when it is wrong (and said so).
func (d *decoder) webhook(item *yaml.Node, k string) (w Webhook, set map[string]*yaml.Node, ok bool) {
	w = Webhook{Format: "json", Events: core.DefaultNotifyEvents()}
	set = map[string]*yaml.Node{}
	track := func(name string, f func(*yaml.Node, string)) func(*yaml.Node, string) {
		return func(n *yaml.Node, k string) { set[name] = n; f(n, k) }
	}
	before := len(d.errs)
	d.mapping(item, k, map[string]func(*yaml.Node, string){
		"name":   track("name", func(n *yaml.Node, k string) { d.id(n, k, &w.Name) }),
		"url":    track("url", func(n *yaml.Node, k string) { d.str(n, k, &w.URL) }),
		"secret": track("secret", func(n *yaml.Node, k string) { d.str(n, k, &w.Secret) }),
		"events": track("events", func(n *yaml.Node, k string) { d.notifyEvents(n, k, &w.Events) }),
		"format": track("format", func(n *yaml.Node, k string) { oneOf(d, n, k, WebhookFormats, &w.Format) }),
	})
	if len(d.errs) != before || item.Kind != yaml.MappingNode {
		return w, set, false
	}
	if set["url"] == nil || strings.TrimSpace(w.URL) == "" {
		d.fail(item, k+".url", "required: where notifications are POSTed, such as https://hooks.example.com/wilco")
		return w, set, false
	}
	resolved, err := expand(w.URL, os.Getenv)
	if err == nil {
		err = checkHookURL(resolved)
	}
	if err != nil {
		d.fail(set["url"], k+".url", "%v", err)
		return w, set, false
	}
	if _, err := expand(w.Secret, os.Getenv); err != nil {
		d.fail(set["secret"], k+".secret", "%v", err)
		return w, set, false
	}
	if w.Name == "" {
		u, _ := url.Parse(resolved)
		if w.Name = u.Host; !core.ValidID(w.Name) {
			d.fail(set["url"], k+".name", "required here: the URL's host %q is no name (use 1 to 64 of A-Z a-z 0-9 . _ : -)", u.Host)
			return w, set, false
		}
	}
	return w, set, true
}

// uniqueHookName checks w's name is its own: not the desktop's, nor an
// earlier webhook's (names: name → index, of the list at key).
func (d *decoder) uniqueHookName(w Webhook, set map[string]*yaml.Node, k, key string, names map[string]int) bool {
	nameNode := set["name"]
	if nameNode == nil {
		nameNode = set["url"]
	}
	switch j, dup := names[w.Name]; {
	case w.Name == DesktopHook:
		d.fail(nameNode, k+".name", "%q is the desktop notifications' name; choose another", w.Name)
		return false
	case dup && set["name"] == nil:
		d.fail(nameNode, k+".name", "%q is already the name of %s[%d] (a webhook's name is its URL's host unless given): give each a name", w.Name, key, j)
		return false
	case dup:
		d.fail(nameNode, k+".name", "%q is already the name of %s[%d]", w.Name, key, j)
		return false
	}
	return true
}

func (d *decoder) notifyEvents(n *yaml.Node, key string, to *[]core.NotifyEvent) {
	var names []string
	before := len(d.errs)
	d.strings(n, key, &names)
	if len(d.errs) != before {
		return
	}
	if len(names) == 0 {
		d.fail(n, key, "must name at least one event (leave events out for every event but success)")
		return
	}
	var out []core.NotifyEvent
	for i, name := range names {
		e := core.NotifyEvent(name)
		ik := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case !e.Valid():
			d.fail(resolve(n.Content[i]), ik, "must be one of %s, got %q", strings.Join(NotifyEventNames(), ", "), name)
		case slices.Contains(out, e):
			d.fail(resolve(n.Content[i]), ik, "%q is named twice", name)
		default:
			out = append(out, e)
		}
	}
	*to = out
}

// NotifyEventNames are the events a hook may listen for.
func NotifyEventNames() []string {
	var out []string
	for _, e := range core.NotifyEvents() {
		out = append(out, string(e))
	}
	return out
}
