package exec

import (
	"regexp"
	"strconv"
	"strings"
)

// PresetVersions are, per preset, the newest version of the agent's CLI
// its command line and output parser are known to work with. `wilco init`
// notes an installed CLI newer than this: its flags or output may have
// changed (docs/AGENTS.md says what each preset relies on).
var PresetVersions = map[string]string{
	PresetClaudeCode: "2.1.331", // @anthropic-ai/claude-code
	PresetCodex:      "0.169.0", // @openai/codex
	PresetGemini:     "0.61.0",  // @google/gemini-cli
	PresetOpencode:   "1.18.33", // opencode-ai
}

var semver = regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`)

// ParseVersion finds the first x.y.z in a program's --version output.
func ParseVersion(out string) (string, bool) {
	m := semver.FindString(out)
	return m, m != ""
}

// NewerVersion reports whether version a is newer than b (both x.y.z).
func NewerVersion(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3 && i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x > y
		}
	}
	return false
}
