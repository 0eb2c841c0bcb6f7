package exec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI reads MCP servers only from settings files: wilco's home for
// it holds the user's settings with wilco's server added, links to the rest
// of the user's .gemini, and leaves the user's files as they were.
func TestGeminiHomeAddsWilcosServerToTheUsersSettingsWithoutChangingThem(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	user := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(filepath.Join(user, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{
  // the user's comment, "with // inside a string" kept
  "security": {"auth": {"selectedType": "gemini-api-key"}}, /* and a block */
  "mcpServers": {"theirs": {"command": "their-server"}}
}`
	for name, text := range map[string]string{"settings.json": settings, "oauth_creds.json": `{"token":"x"}`} {
		if err := os.WriteFile(filepath.Join(user, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := geminiHome([]string{"/bin/wilco", "mcp"}, home, dir); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Security   map[string]any
		MCPServers map[string]struct {
			Command string
			Args    []string
			Trust   bool
			Env     map[string]string
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	w := got.MCPServers["wilco"]
	if got.Security == nil || got.MCPServers["theirs"].Command != "their-server" || w.Command != "/bin/wilco" ||
		strings.Join(w.Args, " ") != "mcp" || !w.Trust || w.Env["WILCO_AGENT_TOKEN"] != "$WILCO_AGENT_TOKEN" {
		t.Fatalf("settings:\n%s", b)
	}
	for _, name := range []string{"oauth_creds.json", "tmp"} {
		if target, err := os.Readlink(filepath.Join(dir, ".gemini", name)); err != nil || target != filepath.Join(user, name) {
			t.Fatalf("%s: %q %v", name, target, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(user, "settings.json")); string(b) != settings {
		t.Fatalf("the user's settings changed:\n%s", b)
	}
	// Again: the same home, nothing doubled.
	if err := geminiHome([]string{"/bin/wilco", "mcp"}, home, dir); err != nil {
		t.Fatal(err)
	}
}

// Settings that cannot be read are the user's as they are (linked): no
// server is registered rather than the user's settings lost.
func TestGeminiHomeLinksSettingsItCannotRead(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := geminiHome([]string{"wilco", "mcp"}, home, dir); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, ".gemini", "settings.json")); err != nil || target != filepath.Join(home, ".gemini", "settings.json") {
		t.Fatalf("settings.json: %q %v", target, err)
	}
}

// A user without a .gemini folder gets a home with only wilco's server.
func TestGeminiHomeWithoutUserSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := geminiHome([]string{"wilco", "mcp"}, t.TempDir(), dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gemini", "settings.json"))
	if err != nil || !strings.Contains(string(b), `"wilco"`) {
		t.Fatalf("%s %v", b, err)
	}
}

// The records of Gemini CLI's conversations are kept in the user's
// ~/.gemini/tmp, made when the user has none yet: where the user's own
// Gemini CLI resumes them and wilco reads them, not in wilco's home.
func TestGeminiHomeKeepsTheConversationsInTheUsersGeminiFolder(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	if err := geminiHome([]string{"wilco", "mcp"}, home, dir); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(home, ".gemini", "tmp")
	if target, err := os.Readlink(filepath.Join(dir, ".gemini", "tmp")); err != nil || target != user {
		t.Fatalf("tmp: %q %v", target, err)
	}
	if info, err := os.Stat(user); err != nil || !info.IsDir() {
		t.Fatalf("the user's tmp: %v %v", info, err)
	}
}

func FuzzStripJSONComments(f *testing.F) {
	for _, s := range []string{`{"a": 1} // x`, `{"a": "//"}`, `/* */{}`, `{"a": "\"//"}`, "/*", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := stripJSONComments(s)
		if len(out) > len(s) {
			t.Fatalf("longer than its input: %q → %q", s, out)
		}
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			// Valid JSON has no comments: it comes back as it was.
			if out != s {
				t.Fatalf("valid JSON changed: %q → %q", s, out)
			}
		}
	})
}
