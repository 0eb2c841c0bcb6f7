package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"wilco/core"
)

// Error is one problem of a configuration file: where it is and what is
// wrong.
type Error struct {
	File string
	Line int // 0 when the problem has no line (a key missing from the file)
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads and checks the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse reads and checks a configuration; name is the file name used in
// error messages.
func Parse(name string, data []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{File: name, Line: yamlErrorLine(err), Msg: yamlErrorText(err)}
	}
	d := &decoder{file: name, lines: map[string]int{}}
	c := Default()
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || isNull(doc) {
		d.errs = append(d.errs, &Error{File: name, Key: "agents", Msg: "required: the file is empty; list the agents tasks go to (agents: [] for none yet)"})
		return nil, d.err()
	}
	d.config(doc, c)
	if len(d.errs) == 0 {
		d.crossCheck(c)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return c, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrorLine(err error) int {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func yamlErrorText(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	return "not valid YAML: " + yamlLine.ReplaceAllString(strings.TrimPrefix(s, "unmarshal errors:\n  "), "line $1")
}

type decoder struct {
	file  string
	errs  []error
	lines map[string]int // key path → line of its value
	// landHow is land.how's node when the file sets it: whether it is a
	// way to land is checked once parallel is known.
	landHow *yaml.Node
	// intakeNode is the intake section's node when the file has one.
	intakeNode *yaml.Node
}

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return errors.Join(d.errs...)
}

func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func join(key, name string) string {
	if key == "" {
		return name
	}
	return key + "." + name
}

// mapping walks a mapping node, calling the handler of each known key and
// reporting unknown and repeated keys. A null value leaves the default.
func (d *decoder) mapping(n *yaml.Node, key string, fields map[string]func(*yaml.Node, string)) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, key, "must be a mapping of keys (%s), got %s", known(fields), describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		name := k.Value
		path := join(key, name)
		set, ok := fields[name]
		switch {
		case k.Kind != yaml.ScalarNode:
			d.fail(k, key, "keys must be plain names, got %s", describe(k))
		case !ok:
			d.fail(k, path, "unknown key (known keys here: %s)", known(fields))
		case seen[name]:
			d.fail(k, path, "repeated key")
		default:
			seen[name] = true
			d.lines[path] = v.Line
			if !isNull(v) {
				set(v, path)
			}
		}
	}
}

func known(fields map[string]func(*yaml.Node, string)) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func (d *decoder) scalar(n *yaml.Node, key, want string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, key, "must be %s, got %s", want, describe(n))
		return false
	}
	return true
}

func (d *decoder) str(n *yaml.Node, key string, to *string) {
	if d.scalar(n, key, "a string") {
		*to = n.Value
	}
}

// id reads a name of wilco's: 1 to 64 of A-Z a-z 0-9 . _ : - (core.ValidID).
func (d *decoder) id(n *yaml.Node, key string, to *string) {
	d.str(n, key, to)
	if n.Kind == yaml.ScalarNode && !core.ValidID(*to) {
		d.fail(n, key, "%q: use 1 to 64 of A-Z a-z 0-9 . _ : -", *to)
	}
}

func (d *decoder) integer(n *yaml.Node, key string, to *int) {
	if !d.scalar(n, key, "an integer") {
		return
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || n.Tag != "!!int" {
		d.fail(n, key, "must be an integer, got %q", n.Value)
		return
	}
	*to = v
}

func (d *decoder) boolean(n *yaml.Node, key string, to *bool) {
	if !d.scalar(n, key, "true or false") {
		return
	}
	if n.Tag != "!!bool" {
		d.fail(n, key, "must be true or false, got %q", n.Value)
		return
	}
	*to = strings.EqualFold(n.Value, "true")
}

// duration reads a Go duration string; positive says it must be above
// zero.
func (d *decoder) duration(n *yaml.Node, key string, to *time.Duration, positive bool) {
	if !d.scalar(n, key, `a Go duration such as "30s"`) {
		return
	}
	v, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		d.fail(n, key, "must be a Go duration such as \"30s\" or \"5m\", got %q", n.Value)
	case v < 0:
		d.fail(n, key, "must not be negative, got %q", n.Value)
	case positive && v == 0:
		d.fail(n, key, "must be positive, got %q", n.Value)
	default:
		*to = v
	}
}

func (d *decoder) durations(n *yaml.Node, key string, to *[]time.Duration) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "must be a list of Go durations such as [30s, 60s], got %s", describe(n))
		return
	}
	out := make([]time.Duration, 0, len(n.Content))
	ok := true
	for i, item := range n.Content {
		item = resolve(item)
		k := fmt.Sprintf("%s[%d]", key, i)
		d.lines[k] = item.Line
		var v time.Duration
		before := len(d.errs)
		d.duration(item, k, &v, true)
		ok = ok && len(d.errs) == before
		out = append(out, v)
	}
	if ok {
		*to = out
	}
}

func (d *decoder) strings(n *yaml.Node, key string, to *[]string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "must be a list such as [a, b], got %s", describe(n))
		return
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		item = resolve(item)
		k := fmt.Sprintf("%s[%d]", key, i)
		d.lines[k] = item.Line
		if !d.scalar(item, k, "a string") {
			continue
		}
		if isNull(item) || item.Value == "" {
			d.fail(item, k, "must not be empty")
			continue
		}
		out = append(out, item.Value)
	}
	*to = out
}

func nonNegative(d *decoder, n *yaml.Node, key string, to *int) {
	var v int
	before := len(d.errs)
	d.integer(n, key, &v)
	if len(d.errs) != before {
		return
	}
	if v < 0 {
		d.fail(n, key, "must not be negative, got %d", v)
		return
	}
	*to = v
}

func nonNegativeInt64(d *decoder, n *yaml.Node, key string, to *int64) {
	var v int
	before := len(d.errs)
	d.integer(n, key, &v)
	if len(d.errs) != before {
		return
	}
	if v < 0 {
		d.fail(n, key, "must not be negative, got %d", v)
		return
	}
	*to = int64(v)
}

func nonNegativeFloat(d *decoder, n *yaml.Node, key string, to *float64) {
	n = resolve(n)
	var v float64
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		d.fail(n, key, "must be a number such as 5 or 2.50, got %s", describe(n))
		return
	}
	if v < 0 {
		d.fail(n, key, "must not be negative, got %v", v)
		return
	}
	*to = v
}

func positiveInt(d *decoder, n *yaml.Node, key string, to *int) {
	var v int
	before := len(d.errs)
	d.integer(n, key, &v)
	if len(d.errs) != before {
		return
	}
	if v < 1 {
		d.fail(n, key, "must be at least 1, got %d", v)
		return
	}
	*to = v
}

func oneOf(d *decoder, n *yaml.Node, key string, allowed []string, to *string) {
	var v string
	d.str(n, key, &v)
	if v == "" && n.Kind == yaml.ScalarNode {
		d.fail(n, key, "must be one of %s, got nothing", strings.Join(allowed, ", "))
		return
	}
	if v != "" && !slices.Contains(allowed, v) {
		d.fail(n, key, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
		return
	}
	*to = v
}

// --- the file -----------------------------------------------------------------

func (d *decoder) config(n *yaml.Node, c *Config) {
	agentsSeen := false
	d.mapping(n, "", map[string]func(*yaml.Node, string){
		"version":      func(n *yaml.Node, k string) { d.version(n, k, &c.Version) },
		"listen":       func(n *yaml.Node, k string) { d.listen(n, k, &c.Listen) },
		"store":        func(n *yaml.Node, k string) { d.storeFile(n, k, &c.Store) },
		"orchestrator": func(n *yaml.Node, k string) { d.id(n, k, &c.Orchestrator) },
		"agents": func(n *yaml.Node, k string) {
			agentsSeen = true
			d.agents(n, k, c)
		},
		"verify": func(n *yaml.Node, k string) {
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"steps": func(n *yaml.Node, k string) { d.steps(n, k, &c.Verify) },
			})
		},
		"policy": func(n *yaml.Node, k string) { d.policy(n, k, &c.Policy) },
		"logs": func(n *yaml.Node, k string) {
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"retry_log_retention":   func(n *yaml.Node, k string) { d.duration(n, k, &c.Logs.RetryLogRetention, true) },
				"retry_jsonl_retention": func(n *yaml.Node, k string) { d.duration(n, k, &c.Logs.RetryJSONLRetention, true) },
			})
		},
		"prices": func(n *yaml.Node, k string) { d.prices(n, k, c) },
		"notify": func(n *yaml.Node, k string) { d.notify(n, k, c) },
		"compat": func(n *yaml.Node, k string) {
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"aimaestro": func(n *yaml.Node, k string) { d.boolean(n, k, &c.Compat.AIMaestro) },
			})
		},
		"done":      func(n *yaml.Node, k string) { d.done(n, k, c) },
		"review":    func(n *yaml.Node, k string) { d.review(n, k, c) },
		"probe":     func(n *yaml.Node, k string) { d.boolean(n, k, &c.Probe) },
		"transport": func(n *yaml.Node, k string) { d.transport(n, k, &c.Transport) },
		"package":   func(n *yaml.Node, k string) { d.packagePattern(n, k, &c.Package) },
		"land":      func(n *yaml.Node, k string) { d.land(n, k, c) },
		"forge":     func(n *yaml.Node, k string) { d.forge(n, k, c) },
		"intake":    func(n *yaml.Node, k string) { d.intake(n, k, c) },
		"parallel":  func(n *yaml.Node, k string) { d.parallel(n, k, &c.Parallel) },
	})
	d.checkLand(c)
	d.checkForge(c)
	d.checkReferences(n, c, agentsSeen)
}

// version reads the file's version, which must be DefaultVersion.
func (d *decoder) version(n *yaml.Node, k string, to *int) {
	d.integer(n, k, to)
	if *to != DefaultVersion {
		d.fail(n, k, "must be %d (the only version there is), got %q", DefaultVersion, n.Value)
	}
}

// listen reads the server's address, a host:port.
func (d *decoder) listen(n *yaml.Node, k string, to *string) {
	d.str(n, k, to)
	if err := checkListen(*to); err != nil {
		d.fail(n, k, "%v", err)
	}
}

// storeFile reads the store's file, which must not be blank.
func (d *decoder) storeFile(n *yaml.Node, k string, to *string) {
	d.str(n, k, to)
	if strings.TrimSpace(*to) == "" && n.Kind == yaml.ScalarNode {
		d.fail(n, k, "must name a file, got nothing")
	}
}

// transport reads the NATS servers' URLs (CheckTransport), "" for none.
func (d *decoder) transport(n *yaml.Node, k string, to *string) {
	d.str(n, k, to)
	if n.Kind == yaml.ScalarNode && *to != "" {
		if err := CheckTransport(*to); err != nil {
			d.fail(n, k, "%v", err)
		}
	}
}

// packagePattern reads the monorepo's package pattern (core.CheckPackage).
func (d *decoder) packagePattern(n *yaml.Node, k string, to *string) {
	d.str(n, k, to)
	if n.Kind == yaml.ScalarNode {
		if err := core.CheckPackage(*to); err != nil {
			d.fail(n, k, "%v", err)
		}
	}
}

// parallel reads how many tasks are worked at once: at least 1 (1 after
// the error when less).
func (d *decoder) parallel(n *yaml.Node, k string, to *int) {
	d.integer(n, k, to)
	if n.Kind == yaml.ScalarNode && *to < 1 {
		d.fail(n, k, "must be at least 1 (tasks worked at once), got %d", *to)
		*to = 1
	}
}

// checkLand checks land.how against parallel (merge, rebase and squash
// need tasks worked in parallel; commit needs one at a time), and defaults
// it from parallel when the file does not set it: merge when parallel >
// 1, none when 1.
func (d *decoder) checkLand(c *Config) {
	if d.landHow == nil {
		c.Land.How = core.DefaultLandHow(c.Parallel)
		return
	}
	if err := core.CheckLand(c.Land.How, c.Parallel); err != nil {
		d.fail(d.landHow, "land.how", "%v", err)
		return
	}
	if c.Land.How == core.LandPR && c.Forge == nil {
		d.fail(d.landHow, "land.how", "pr needs a forge section: the forge the pull requests are opened on (forge: {kind: github})")
	}
}

// land decodes land: the target branch, how a verified change lands
// (checked against parallel by checkLand), and the order.
func (d *decoder) land(n *yaml.Node, k string, c *Config) {
	d.mapping(n, k, map[string]func(*yaml.Node, string){
		"to": func(n *yaml.Node, k string) {
			d.str(n, k, &c.Land.To)
			if n.Kind == yaml.ScalarNode {
				if err := core.CheckBranch(c.Land.To); err != nil {
					d.fail(n, k, "%v", err)
				}
			}
		},
		"how": func(n *yaml.Node, k string) {
			var how string
			oneOf(d, n, k, core.LandHows, &how)
			if how == "" {
				return
			}
			d.landHow, c.Land.How = n, how
		},
		"order":        func(n *yaml.Node, k string) { oneOf(d, n, k, core.LandOrders, &c.Land.Order) },
		"merge":        func(n *yaml.Node, k string) { oneOf(d, n, k, LandMerges, &c.Land.Merge) },
		"merge_method": func(n *yaml.Node, k string) { oneOf(d, n, k, LandMergeMethods, &c.Land.MergeMethod) },
		"ci_timeout":   func(n *yaml.Node, k string) { d.duration(n, k, &c.Land.CITimeout, true) },
		"poll": func(n *yaml.Node, k string) {
			d.duration(n, k, &c.Land.Poll, true)
			if n.Kind == yaml.ScalarNode && c.Land.Poll > 0 && c.Land.Poll < MinLandPoll {
				d.fail(n, k, "must be at least %s (each poll asks the forge about every open pull request), got %s", MinLandPoll, c.Land.Poll)
			}
		},
	})
}

// prices decodes prices: a model's (or an agent's) name to its prices.
func (d *decoder) prices(n *yaml.Node, k string, c *Config) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.fail(n, k, "must be a mapping of a model's (or an agent's) name to its prices, got %s", describe(n))
		return
	}
	c.Prices = map[string]core.Price{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		kn, vn := resolve(n.Content[j]), n.Content[j+1]
		var p core.Price
		pk := k + "." + kn.Value
		if _, dup := c.Prices[kn.Value]; dup {
			d.fail(kn, pk, "repeated key")
		}
		d.mapping(vn, pk, map[string]func(*yaml.Node, string){
			"input_per_mtok":  func(n *yaml.Node, k string) { nonNegativeFloat(d, n, k, &p.InputPerMTok) },
			"output_per_mtok": func(n *yaml.Node, k string) { nonNegativeFloat(d, n, k, &p.OutputPerMTok) },
			"cached_per_mtok": func(n *yaml.Node, k string) { nonNegativeFloat(d, n, k, &p.CachedPerMTok) },
		})
		c.Prices[kn.Value] = p
	}
}

// done decodes done: the limits a change must keep and the checks it
// must pass to be done.
func (d *decoder) done(n *yaml.Node, k string, c *Config) {
	check := func(to *core.Check) func(*yaml.Node, string) {
		return func(n *yaml.Node, k string) {
			var s string
			oneOf(d, n, k, Checks, &s)
			*to = core.Check(s)
		}
	}
	d.mapping(n, k, map[string]func(*yaml.Node, string){
		"max_files": func(n *yaml.Node, k string) { nonNegative(d, n, k, &c.Done.MaxFiles) },
		"max_lines": func(n *yaml.Node, k string) { nonNegative(d, n, k, &c.Done.MaxLines) },
		"size":      check(&c.Done.Size),
		"tests":     check(&c.Done.Tests),
	})
}

// review decodes review: the agent that reviews a verified change.
func (d *decoder) review(n *yaml.Node, k string, c *Config) {
	d.mapping(n, k, map[string]func(*yaml.Node, string){
		"agent": func(n *yaml.Node, k string) {
			d.str(n, k, &c.Review.Agent)
			if n.Kind == yaml.ScalarNode && !core.ValidID(c.Review.Agent) {
				d.fail(n, k, "%q: name an agent (1 to 64 of A-Z a-z 0-9 . _ : -)", c.Review.Agent)
			}
		},
		"timeout": func(n *yaml.Node, k string) { d.duration(n, k, &c.Review.Timeout, true) },
	})
}

// checkReferences checks what one key alone cannot: the reviewer is an agent
// and no scout, agents are listed, no agent takes the orchestrator's name.
func (d *decoder) checkReferences(n *yaml.Node, c *Config, agentsSeen bool) {
	if c.Review.Agent != "" {
		if a, ok := c.Agent(c.Review.Agent); !ok {
			d.errs = append(d.errs, &Error{File: d.file, Line: d.lineOf("review.agent"), Key: "review.agent",
				Msg: fmt.Sprintf("%q is not an agent of this file: name one of its agents", c.Review.Agent)})
		} else if a.Role == core.RoleScout {
			d.errs = append(d.errs, &Error{File: d.file, Line: d.lineOf("review.agent"), Key: "review.agent",
				Msg: fmt.Sprintf("%q is a scout (read-only helper): name another agent as the reviewer", c.Review.Agent)})
		}
	}
	if !agentsSeen && n.Kind == yaml.MappingNode {
		d.errs = append(d.errs, &Error{File: d.file, Key: "agents", Msg: "required: list the agents tasks go to (agents: [] for none yet)"})
	}
	for i, a := range c.Agents {
		if a.Name == c.Orchestrator {
			key := fmt.Sprintf("agents[%d].name", i)
			d.errs = append(d.errs, &Error{File: d.file, Line: d.lineOf(key), Key: key,
				Msg: fmt.Sprintf("%q is the orchestrator's name (the name agents write to); choose another, or set orchestrator", a.Name)})
		}
	}
}

// checkListen checks a host:port.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be host:port such as %q, got %q", DefaultListen, addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port must be a number from 0 to 65535, got %q", port)
	}
	return nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (d *decoder) agents(n *yaml.Node, key string, c *Config) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "must be a list of agents, got %s", describe(n))
		return
	}
	// An empty list is valid: agents may be registered over HTTP, and
	// until one is, tasks are refused with that reason.
	names := map[string]int{}
	for i, item := range n.Content {
		item = resolve(item)
		k := fmt.Sprintf("%s[%d]", key, i)
		d.lines[k] = item.Line
		if item == nil || isNull(item) {
			d.fail(item, k, "must be an agent (a mapping with name and adapter), got nothing")
			continue
		}
		before := len(d.errs)
		a, set := d.agent(item, k)
		if len(d.errs) != before || item.Kind != yaml.MappingNode {
			continue
		}
		d.checkAgent(item, k, &a, set, names)
		if len(d.errs) == before && a.Adapter == "tmux" && a.Tmux != nil {
			if w := readyWarning(a.Name, a.Tmux.Ready); w != "" {
				key := k + ".tmux.ready"
				c.Warnings = append(c.Warnings, (&Error{File: d.file, Line: d.lineOf(key), Key: key, Msg: w}).Error())
			}
		}
		c.Agents = append(c.Agents, a)
	}
}

// agent reads the agent at item (key k) field by field, and the node of
// each field given.
func (d *decoder) agent(item *yaml.Node, k string) (Agent, map[string]*yaml.Node) {
	var a Agent
	set := map[string]*yaml.Node{}
	track := func(name string, f func(*yaml.Node, string)) func(*yaml.Node, string) {
		return func(n *yaml.Node, k string) { set[name] = n; f(n, k) }
	}
	d.mapping(item, k, map[string]func(*yaml.Node, string){
		"name":         track("name", func(n *yaml.Node, k string) { d.id(n, k, &a.Name) }),
		"adapter":      track("adapter", func(n *yaml.Node, k string) { oneOf(d, n, k, Adapters, &a.Adapter) }),
		"preset":       track("preset", func(n *yaml.Node, k string) { oneOf(d, n, k, Presets, &a.Preset) }),
		"command":      track("command", func(n *yaml.Node, k string) { d.strings(n, k, &a.Command) }),
		"prompt":       track("prompt", func(n *yaml.Node, k string) { oneOf(d, n, k, Prompts, &a.Prompt) }),
		"handshake":    track("handshake", func(n *yaml.Node, k string) { oneOf(d, n, k, Handshakes, &a.Handshake) }),
		"capabilities": track("capabilities", func(n *yaml.Node, k string) { d.capabilities(n, k, &a.Capabilities) }),
		"timeout":      track("timeout", func(n *yaml.Node, k string) { d.duration(n, k, &a.Timeout, true) }),
		"idle_timeout": track("idle_timeout", func(n *yaml.Node, k string) { d.duration(n, k, &a.IdleTimeout, true) }),
		"tmux":         track("tmux", func(n *yaml.Node, k string) { d.tmux(n, k, &a.Tmux) }),
		"role":         track("role", func(n *yaml.Node, k string) { oneOf(d, n, k, Roles, &a.Role) }),
		"instances":    track("instances", func(n *yaml.Node, k string) { d.instances(n, k, &a.Instances) }),
		"env":          track("env", func(n *yaml.Node, k string) { d.env(n, k, &a.Env) }),
	})
	return a, set
}

// instances reads how many tasks an agent works at once: at least 1.
func (d *decoder) instances(n *yaml.Node, k string, to *int) {
	d.integer(n, k, to)
	if n.Kind == yaml.ScalarNode && *to < 1 {
		d.fail(n, k, "must be at least 1 (tasks the agent works at once), got %d", *to)
	}
}

// env reads an agent's environment: a mapping of variables' names to
// strings.
func (d *decoder) env(n *yaml.Node, k string, to *map[string]string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, k, "must be a mapping of NAME: value, got %s", describe(n))
		return
	}
	env := map[string]string{}
	*to = env
	for j := 0; j+1 < len(n.Content); j += 2 {
		kn, vn := resolve(n.Content[j]), resolve(n.Content[j+1])
		ek := k + "." + kn.Value
		switch {
		case !envName.MatchString(kn.Value):
			d.fail(kn, ek, "not a valid environment variable name")
		case vn.Kind != yaml.ScalarNode:
			d.fail(vn, ek, "must be a string, got %s", describe(vn))
		default:
			if _, dup := env[kn.Value]; dup {
				d.fail(kn, ek, "repeated key")
			}
			env[kn.Value] = vn.Value
		}
	}
}

func (d *decoder) capabilities(n *yaml.Node, k string, to *[]string) {
	var caps []string
	before := len(d.errs)
	d.strings(n, k, &caps)
	if len(d.errs) != before {
		return
	}
	for i, c := range caps {
		if !core.ValidID(c) {
			d.fail(resolve(n.Content[i]), fmt.Sprintf("%s[%d]", k, i), "%q: use 1 to 64 of A-Z a-z 0-9 . _ : -", c)
		}
	}
	*to = caps
}

// checkAgent checks what concerns several keys of one agent (Agent.check),
// and puts each problem on the line of the key it names.
func (d *decoder) checkAgent(item *yaml.Node, k string, a *Agent, set map[string]*yaml.Node, names map[string]int) {
	if line, dup := names[a.Name]; dup && a.Name != "" {
		d.fail(set["name"], k+".name", "%q is already the name of the agent on line %d", a.Name, line)
	} else if a.Name != "" {
		names[a.Name] = set["name"].Line
	}
	present := make([]string, 0, len(set))
	for f := range set {
		present = append(present, f)
	}
	for _, p := range a.check(present) {
		n := set[p.field]
		if n == nil {
			n = item
		}
		d.fail(n, k+"."+p.field, "%s", p.msg)
	}
}

type problem struct{ field, msg string }

// check applies the rules that tie an agent's fields together and sets the
// exec defaults (prompt stdin, handshake inline). present lists the fields
// that were given.
func (a *Agent) check(present []string) []problem {
	var out []problem
	add := func(field, format string, args ...any) {
		out = append(out, problem{field, fmt.Sprintf(format, args...)})
	}
	has := func(f string) bool { return slices.Contains(present, f) }
	if a.Name == "" {
		add("name", "required")
	}
	if a.Adapter == "" {
		add("adapter", "required: one of %s", strings.Join(Adapters, ", "))
		return out
	}
	execOnly := []string{"prompt", "handshake"}
	if has("tmux") && a.Adapter != "tmux" {
		add("tmux", "applies to adapter tmux only")
	}
	switch a.Adapter {
	case "exec":
		if a.Preset == "" && len(a.Command) == 0 {
			add("command", "required for adapter exec without a preset: the program and its arguments, such as [my-agent, --print]")
		}
		if a.Prompt == "" {
			a.Prompt = "stdin"
		}
		if a.Handshake == "" {
			a.Handshake = "inline"
		}
		if a.Handshake == "session" && a.Preset == "" {
			add("handshake", "session needs a preset (the preset knows how to resume the agent's session)")
		}
	case "mailbox":
		for _, f := range execOnly {
			if has(f) {
				add(f, "applies to adapter exec only; a mailbox agent polls wilco over HTTP")
			}
		}
		if has("preset") {
			add("preset", "applies to adapters exec and tmux only; a mailbox agent polls wilco over HTTP")
		}
		for _, f := range []string{"command", "env", "timeout", "idle_timeout"} {
			if has(f) {
				add(f, "applies to adapter exec and tmux only; a mailbox agent polls wilco over HTTP")
			}
		}
	case "tmux":
		for _, f := range execOnly {
			if has(f) {
				add(f, "applies to adapter exec only: a tmux agent gets its prompt pasted into its pane, and acknowledges in it")
			}
		}
		session := a.Tmux != nil && a.Tmux.Session != ""
		if a.Preset == "" && len(a.Command) == 0 && !session {
			add("command", "required for adapter tmux without a preset or a tmux.session: what the pane runs, such as [python3, my_agent.py]")
		}
		if a.Preset == "" && (a.Tmux == nil || a.Tmux.Ready == "") {
			add("tmux", "tmux.ready is required without a preset: a pattern of the pane's last line when the program waits for input, such as '^>\\s*$'")
		}
	}
	if a.Timeout > 0 && a.IdleTimeout > a.Timeout {
		add("idle_timeout", "must not exceed timeout (%s > %s)", a.IdleTimeout, a.Timeout)
	}
	return out
}

// Check checks an agent given other than in the file (the API's POST
// /v1/agents), with the file's rules, and sets the exec defaults. present
// lists the fields that were given (by their wilco.yaml keys). The error
// names the first bad field.
func (a *Agent) Check(present ...string) error {
	if !core.ValidID(a.Name) {
		return fmt.Errorf("name %q: use 1 to 64 of A-Z a-z 0-9 . _ : -", a.Name)
	}
	checks := []struct {
		field, value string
		allowed      []string
	}{{"adapter", a.Adapter, Adapters}, {"preset", a.Preset, Presets}, {"prompt", a.Prompt, Prompts}, {"handshake", a.Handshake, Handshakes}}
	for _, c := range checks {
		if c.value != "" && !slices.Contains(c.allowed, c.value) {
			return fmt.Errorf("%s: must be one of %s, got %q", c.field, strings.Join(c.allowed, ", "), c.value)
		}
	}
	for i, c := range a.Capabilities {
		if !core.ValidID(c) {
			return fmt.Errorf("capabilities[%d] %q: use 1 to 64 of A-Z a-z 0-9 . _ : -", i, c)
		}
	}
	for k := range a.Env {
		if !envName.MatchString(k) {
			return fmt.Errorf("env.%s: not a valid environment variable name", k)
		}
	}
	for i, c := range a.Command {
		if c == "" {
			return fmt.Errorf("command[%d]: must not be empty", i)
		}
	}
	if a.Timeout < 0 || a.IdleTimeout < 0 {
		return fmt.Errorf("timeout and idle_timeout must not be negative")
	}
	if p := a.check(present); len(p) > 0 {
		return fmt.Errorf("%s: %s", p[0].field, p[0].msg)
	}
	return nil
}

func (d *decoder) steps(n *yaml.Node, key string, v *Verify) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "must be a list of steps such as [{name: unit, run: \"go test ./...\"}], got %s", describe(n))
		return
	}
	names := map[string]bool{}
	for i, item := range n.Content {
		item = resolve(item)
		k := fmt.Sprintf("%s[%d]", key, i)
		d.lines[k] = item.Line
		var s Step
		before := len(d.errs)
		d.mapping(item, k, map[string]func(*yaml.Node, string){
			"name":    func(n *yaml.Node, k string) { d.str(n, k, &s.Name) },
			"run":     func(n *yaml.Node, k string) { d.str(n, k, &s.Run) },
			"timeout": func(n *yaml.Node, k string) { d.duration(n, k, &s.Timeout, true) },
		})
		if len(d.errs) != before || item.Kind != yaml.MappingNode {
			continue
		}
		if strings.TrimSpace(s.Run) == "" {
			d.fail(item, k+".run", "required: the command to run, such as \"go test ./...\"")
		}
		if s.Name == "" {
			s.Name = fmt.Sprintf("step-%d", i+1)
		}
		if names[s.Name] {
			d.fail(item, k+".name", "%q is already the name of another step", s.Name)
		}
		names[s.Name] = true
		v.Steps = append(v.Steps, s)
	}
}

func (d *decoder) policy(n *yaml.Node, key string, p *Policy) {
	d.mapping(n, key, map[string]func(*yaml.Node, string){
		"ack": func(n *yaml.Node, k string) {
			a := &p.Ack
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"timeouts": func(n *yaml.Node, k string) {
					d.durations(n, k, &a.Timeouts)
					if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
						d.fail(n, k, "must list at least one timeout")
					}
				},
				"backoff": func(n *yaml.Node, k string) {
					d.mapping(n, k, map[string]func(*yaml.Node, string){
						"base": func(n *yaml.Node, k string) { d.duration(n, k, &a.BackoffBase, true) },
						"max":  func(n *yaml.Node, k string) { d.duration(n, k, &a.BackoffMax, true) },
					})
				},
				"on_unresponsive": func(n *yaml.Node, k string) {
					var s string
					oneOf(d, n, k, []string{string(core.Reassign), string(core.Escalate)}, &s)
					if s != "" {
						a.OnUnresponsive = core.OnUnresponsive(s)
					}
				},
				"max_corrections": func(n *yaml.Node, k string) { nonNegative(d, n, k, &a.MaxCorrections) },
				"queued_followup": func(n *yaml.Node, k string) { d.duration(n, k, &a.QueuedFollowup, true) },
			})
		},
		"instruction": func(n *yaml.Node, k string) {
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"max_retries": func(n *yaml.Node, k string) { nonNegative(d, n, k, &p.Instruction.MaxRetries) },
			})
		},
		"budget": func(n *yaml.Node, k string) {
			budget := func(b *core.Budget) func(*yaml.Node, string) {
				return func(n *yaml.Node, k string) {
					d.mapping(n, k, map[string]func(*yaml.Node, string){
						"max_cost_usd": func(n *yaml.Node, k string) { nonNegativeFloat(d, n, k, &b.MaxCostUSD) },
						"max_tokens":   func(n *yaml.Node, k string) { nonNegativeInt64(d, n, k, &b.MaxTokens) },
					})
				}
			}
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"task": budget(&p.Budget.Task),
				"day":  budget(&p.Budget.Day),
			})
		},
		"loop": func(n *yaml.Node, k string) {
			l := &p.Loop
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"replan_after":   func(n *yaml.Node, k string) { positiveInt(d, n, k, &l.ReplanAfter) },
				"hard_stop":      func(n *yaml.Node, k string) { positiveInt(d, n, k, &l.HardStop) },
				"max_replans":    func(n *yaml.Node, k string) { nonNegative(d, n, k, &l.MaxReplans) },
				"escalate_after": func(n *yaml.Node, k string) { nonNegative(d, n, k, &l.EscalateAfter) },
			})
		},
		"operation": func(n *yaml.Node, k string) {
			o := &p.Operation
			d.mapping(n, k, map[string]func(*yaml.Node, string){
				"timeout":            func(n *yaml.Node, k string) { d.duration(n, k, &o.Timeout, true) },
				"reminders":          func(n *yaml.Node, k string) { d.durations(n, k, &o.Reminders) },
				"extension":          func(n *yaml.Node, k string) { d.duration(n, k, &o.Extension, true) },
				"proceed_on_timeout": func(n *yaml.Node, k string) { d.boolean(n, k, &o.ProceedOnTimeout) },
				"quorum": func(n *yaml.Node, k string) {
					if !d.scalar(n, k, `"all", "majority" or a number`) {
						return
					}
					q := core.Quorum(n.Value)
					if _, err := q.Need(1 << 30); err != nil || q == "" {
						d.fail(n, k, "must be \"all\", \"majority\" or a number of agents, got %q", n.Value)
						return
					}
					o.Quorum = q
				},
			})
		},
	})
}

// crossCheck runs the core's own validation of the policies (which knows
// the rules that tie several values together) and puts the line of the key
// it names on its message.
func (d *decoder) crossCheck(c *Config) {
	if err := c.Policies().Validate(); err != nil {
		msg := err.Error()
		key, rest, ok := strings.Cut(msg, ": ")
		if !ok {
			key, rest = "policy", msg
		}
		d.errs = append(d.errs, &Error{File: d.file, Line: d.lineOf(key), Key: key, Msg: rest})
	}
	if c.Policy.Loop.ReplanAfter > c.Policy.Loop.HardStop {
		// Valid: the hard stop comes first, so no REPLAN ever happens.
		c.Warnings = append(c.Warnings, (&Error{File: d.file, Line: d.lineOf("policy.loop.replan_after"), Key: "policy.loop.replan_after",
			Msg: fmt.Sprintf("%d is more than hard_stop (%d): the hard stop comes first, so a task never replans", c.Policy.Loop.ReplanAfter, c.Policy.Loop.HardStop)}).Error())
	}
}

// lineOf is the line of key, or of the nearest enclosing key the file has.
func (d *decoder) lineOf(key string) int {
	for key != "" {
		if l, ok := d.lines[key]; ok {
			return l
		}
		if i := strings.LastIndexAny(key, ".["); i >= 0 {
			key = key[:i]
		} else {
			break
		}
	}
	return 0
}

// tmux reads a tmux agent's block.
func (d *decoder) tmux(n *yaml.Node, key string, to **Tmux) {
	t := &Tmux{}
	regex := func(to *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, k string) {
			d.str(n, k, to)
			if _, err := regexp.Compile(*to); err != nil {
				d.fail(n, k, "not a regular expression: %v", err)
			}
		}
	}
	d.mapping(n, key, map[string]func(*yaml.Node, string){
		"session":      func(n *yaml.Node, k string) { d.str(n, k, &t.Session) },
		"socket":       func(n *yaml.Node, k string) { d.str(n, k, &t.Socket) },
		"ready":        regex(&t.Ready),
		"busy":         regex(&t.Busy),
		"permission":   regex(&t.Permission),
		"submit":       func(n *yaml.Node, k string) { d.str(n, k, &t.Submit) },
		"interrupt":    func(n *yaml.Node, k string) { d.keys(n, k, &t.Interrupt) },
		"clear":        func(n *yaml.Node, k string) { d.keys(n, k, &t.Clear) },
		"approve":      func(n *yaml.Node, k string) { d.keys(n, k, &t.Approve) },
		"deny":         func(n *yaml.Node, k string) { d.keys(n, k, &t.Deny) },
		"width":        func(n *yaml.Node, k string) { nonNegative(d, n, k, &t.Width) },
		"height":       func(n *yaml.Node, k string) { nonNegative(d, n, k, &t.Height) },
		"settle":       func(n *yaml.Node, k string) { d.duration(n, k, &t.Settle, true) },
		"submit_tries": func(n *yaml.Node, k string) { nonNegative(d, n, k, &t.SubmitTries) },
		"allow": func(n *yaml.Node, k string) {
			before := len(d.errs)
			d.strings(n, k, &t.Allow)
			if len(d.errs) != before {
				return
			}
			for i, a := range t.Allow {
				if _, err := regexp.Compile(a); err != nil {
					d.fail(resolve(n.Content[i]), fmt.Sprintf("%s[%d]", k, i), "not a regular expression: %v", err)
				}
			}
		},
	})
	*to = t
}

// keys reads a key or a list of keys (tmux key names: Enter, C-m, Escape…).
func (d *decoder) keys(n *yaml.Node, key string, to *[]string) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		if n.Value == "" {
			d.fail(n, key, "must not be empty")
			return
		}
		*to = []string{n.Value}
		return
	}
	d.strings(n, key, to)
}
