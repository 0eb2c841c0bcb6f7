package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The fixed text of the file EncodeStarter writes: what it says around
// the keys.
const (
	starterHead = `# wilco configuration (written by "wilco init"). Every key but agents is
# optional; the commented values are the defaults. See docs/CONFIG.md.
`
	starterStore   = "# store: .wilco/wilco.db\n"
	starterNoAgent = `# No agent yet: every task is refused until you add one. Replace [] with a
# list of agents, such as these (see docs/AGENTS.md):
agents: []
# Examples:
#   - name: claude                    # Claude Code, run headless per turn
#     adapter: exec
#     preset: claude-code             # or codex, gemini, opencode, aider
#     command: [claude]
#   - name: mine                      # any program: the prompt on stdin
#     adapter: exec
#     command: [./my-agent.sh]
#     prompt: stdin
#   - name: remote-1                  # an agent that polls GET /v1/inbox with
#     adapter: mailbox                # its own token (wilco agents token remote-1)
`
	starterNoVerify = `# No verify step: until you add the steps that prove a change works, no
# task can succeed: each ends "unverified" (wilco run exits 3).
# verify:
#   steps:
#     - {name: unit, run: "make test", timeout: 10m}
`
	starterNotify = `# To hear when you are needed (an escalation, a question, a blocked or stuck
# task…): webhooks and desktop notifications, see docs/NOTIFY.md.
`
	starterWebhooks = `# Examples:
#   webhooks:
#     - url: https://hooks.example.com/wilco
#       secret: "${WILCO_HOOK_SECRET}"  # HMAC-SHA256 key, from the environment
#       events: [escalated, stuck, clarification, blocked, unresponsive, operation, failed]
`
)

// EncodeStarter writes c as the wilco.yaml `wilco init` writes for people
// to read and edit: version, listen, the agents and the verify steps
// written out, and every other key written out where c differs from the
// default, else shown commented with its default value, each mapping on a
// line. No agent and no verify step are written as commented examples,
// with what they mean. Parse reads the file back to the configuration it
// reads back from Encode's.
func (c *Config) EncodeStarter() ([]byte, error) {
	have, err := sections(c.file())
	if err != nil {
		return nil, err
	}
	def, err := sections(Default().file())
	if err != nil {
		return nil, err
	}
	s := &starter{have: have, def: def, written: map[string]bool{}}
	s.b.WriteString(starterHead)
	s.key("version", false)
	s.key("listen", false)
	if have["store"] == nil {
		s.b.WriteString(starterStore)
	}
	s.key("store", false)
	s.key("orchestrator", true)
	s.b.WriteString("\n")
	if len(c.Agents) == 0 {
		s.b.WriteString(starterNoAgent)
		s.written["agents"] = true
	} else {
		s.key("agents", false)
	}
	s.b.WriteString("\n")
	if have["verify"] == nil {
		s.b.WriteString(starterNoVerify)
	} else {
		s.key("verify", false)
	}
	s.b.WriteString("\n")
	for _, k := range []string{"policy", "logs", "compat", "prices", "done", "review", "package", "probe", "transport", "land", "parallel", "forge", "intake"} {
		s.key(k, true)
	}
	s.b.WriteString("\n" + starterNotify)
	s.key("notify", true)
	if len(c.Notify.Webhooks) == 0 {
		s.b.WriteString(starterWebhooks)
	}
	if s.err != nil {
		return nil, s.err
	}
	for k := range have {
		if !s.written[k] {
			return nil, fmt.Errorf("config: the starter file leaves out %s", k)
		}
	}
	return []byte(s.b.String()), nil
}

// starter is the file EncodeStarter is writing.
type starter struct {
	// have and def are the top-level keys of the configuration and of the
	// default one, each a one-key mapping node.
	have, def map[string]*yaml.Node
	written   map[string]bool
	b         strings.Builder
	err       error
}

// key writes the top-level key k, if the configuration has it; when
// orDefault is set and it has the default's value, commented.
func (s *starter) key(k string, orDefault bool) {
	n := s.have[k]
	if n == nil || s.err != nil {
		return
	}
	s.written[k] = true
	text, err := marshal(n)
	if err != nil {
		s.err = fmt.Errorf("config: %s: %w", k, err)
		return
	}
	if d := s.def[k]; orDefault && d != nil {
		if dt, err := marshal(d); err == nil && string(dt) == string(text) {
			text = []byte("# " + strings.ReplaceAll(strings.TrimSuffix(string(text), "\n"), "\n", "\n# ") + "\n")
		}
	}
	s.b.Write(text)
}

// sections returns the top-level keys of f, each as a mapping node of its
// own with its mappings in the starter's style.
func sections(f file) (map[string]*yaml.Node, error) {
	var root yaml.Node
	if err := root.Encode(f); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if key.Value != "agents" {
			flow(value, 0)
		}
		if key.Value == "policy" {
			for j := 0; j+1 < len(value.Content); j += 2 {
				if value.Content[j].Value == "budget" {
					value.Content[j+1].LineComment = "0: no limit"
				}
			}
		}
		out[key.Value] = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, value}}
	}
	return out, nil
}

// flow puts each mapping under a top-level key on one line ({a: 1, b: 2}),
// and the key's own mapping too when it holds no mapping and no list.
// depth is n's below the key.
func flow(n *yaml.Node, depth int) {
	if n.Kind == yaml.MappingNode && (depth > 0 || !nested(n)) {
		n.Style = yaml.FlowStyle
		return
	}
	for _, c := range n.Content {
		flow(c, depth+1)
	}
}

// nested reports whether a mapping holds a mapping or a list of them.
func nested(n *yaml.Node) bool {
	for i := 1; i < len(n.Content); i += 2 {
		v := n.Content[i]
		if v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode && len(v.Content) > 0 && v.Content[0].Kind == yaml.MappingNode {
			return true
		}
	}
	return false
}
