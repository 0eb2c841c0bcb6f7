package test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"wilco/test/blackbox"
)

// runWilco runs the built binary with args and returns its stdout, stderr
// and exit code.
func runWilco(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("wilco %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// listedVerbs are the verbs `wilco help` lists.
func listedVerbs(t *testing.T) []string {
	t.Helper()
	out, _, code := runWilco(t, blackbox.WilcoBin, "help")
	if code != 0 {
		t.Fatalf("wilco help: exit %d", code)
	}
	var verbs []string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			if f := strings.Fields(line); len(f) > 0 {
				verbs = append(verbs, f[0])
			}
		}
	}
	if len(verbs) < 10 {
		t.Fatalf("wilco help lists %v", verbs)
	}
	return verbs
}

// A release sets the version with -ldflags -X; `wilco --version` and
// `wilco version` print it.
func TestVersionIsPrintedByTheFlagAndTheVerb(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "wilco")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v0.0.7-docs", "-o", bin, "./cmd/wilco")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errb, code := runWilco(t, bin, args...)
		if code != 0 || !strings.HasPrefix(out, "wilco v0.0.7-docs (") || !strings.Contains(out, "go1.") {
			t.Errorf("wilco %s: exit %d, %q %q", args[0], code, out, errb)
		}
	}
	// Without -X: a version all the same.
	flag, _, code1 := runWilco(t, blackbox.WilcoBin, "--version")
	verb, _, code2 := runWilco(t, blackbox.WilcoBin, "version")
	if code1 != 0 || code2 != 0 || flag != verb || !strings.HasPrefix(flag, "wilco ") {
		t.Errorf("--version %d %q, version %d %q", code1, flag, code2, verb)
	}
	if _, errb, code := runWilco(t, blackbox.WilcoBin, "version", "extra"); code != 2 || !strings.Contains(errb, "too many arguments") {
		t.Errorf("version extra: exit %d %q", code, errb)
	}
}

// The bash completion loads in bash, registers itself for wilco, and
// completes the verbs `wilco help` lists, subcommands and flags.
func TestBashCompletionLoadsAndCompletes(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	script, _, code := runWilco(t, blackbox.WilcoBin, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "wilco.bash")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		prog := `set -e; source "$1"; complete -p wilco >&2; COMP_WORDS=(` + strings.Join(quoted, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _wilco; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", file).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if !strings.HasPrefix(lines[0], "complete -o default -F _wilco wilco") {
			t.Fatalf("complete -p wilco: %q", lines[0])
		}
		return lines[1:]
	}
	all := complete("wilco", "")
	for _, v := range listedVerbs(t) {
		if !slices.Contains(all, v) {
			t.Errorf("the verb %s is not completed: %v", v, all)
		}
	}
	if got := complete("wilco", "sta"); !slices.Equal(got, []string{"status", "stats"}) {
		t.Errorf("wilco sta<TAB>: %v", got)
	}
	if got := complete("wilco", "agents", ""); !slices.Contains(got, "add") || !slices.Contains(got, "token") || !slices.Contains(got, "--json") {
		t.Errorf("wilco agents <TAB>: %v", got)
	}
	if got := complete("wilco", "submit", "--dry"); !slices.Equal(got, []string{"--dry-run"}) {
		t.Errorf("wilco submit --dry<TAB>: %v", got)
	}
	if got := complete("wilco", "completion", ""); !slices.Equal(got, []string{"bash", "fish", "zsh", "--help"}) {
		t.Errorf("wilco completion <TAB>: %v", got)
	}
}

// The zsh and fish completions are valid scripts of their shells (checked
// when the shell is installed) and name every verb.
func TestZshAndFishCompletionsParse(t *testing.T) {
	t.Parallel()
	verbs := listedVerbs(t)
	for _, shell := range []string{"zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			script, errb, code := runWilco(t, blackbox.WilcoBin, "completion", shell)
			if code != 0 {
				t.Fatalf("completion %s: exit %d %s", shell, code, errb)
			}
			for _, v := range verbs {
				if !strings.Contains(script, "'"+v) {
					t.Errorf("the %s completion does not name %s", shell, v)
				}
			}
			path, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed: the script's syntax is not checked (apt-get install %s)", shell, shell)
			}
			file := filepath.Join(t.TempDir(), "wilco."+shell)
			if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(path, "-n", file).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
			if shell == "zsh" {
				// Loaded after compinit, the script registers its function for wilco.
				cmd := exec.Command(path, "-f", "-c", `autoload -Uz compinit && compinit -u -D && source "$1" && print -r -- "$_comps[wilco]"`, "zsh", file)
				cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
				out, err := cmd.CombinedOutput()
				if err != nil || strings.TrimSpace(string(out)) != "_wilco" {
					t.Errorf("zsh: the completion is not registered for wilco: %v\n%s", err, out)
				}
			}
			if shell == "fish" {
				out, err := exec.Command(path, "--no-config", "-c", "source $argv[1]; complete -C 'wilco sta'", file).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "status") || !strings.Contains(string(out), "stats") {
					t.Errorf("fish: complete -C 'wilco sta': %v\n%s", err, out)
				}
			}
		})
	}
}

// Every route the OpenAPI document of a real server lists answers with
// its documented security, and none with a server error, a 405 or the
// router's 404.
func TestEveryDocumentedRouteOfTheServerAnswersWithoutAServerError(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, `agents:
  - {name: alpha, adapter: mailbox, capabilities: [go]}
compat: {aimaestro: true}
`)
	var doc struct {
		Paths map[string]map[string]struct {
			Security   []map[string]any `json:"security"`
			Parameters []struct {
				Name    string `json:"name"`
				In      string `json:"in"`
				Example string `json:"example"`
			} `json:"parameters"`
			RequestBody *struct {
				Content map[string]struct {
					Example any `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	in.Must(200, in.Call("GET", "/openapi.json", "", nil), &doc)
	var rotated struct{ Token string }
	in.Must(200, in.Call("POST", "/v1/agents/alpha/token", blackbox.AdminToken, nil), &rotated)
	agentTok := rotated.Token
	// The examples of the document name these.
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "body": "hello"}))
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "Report the OS"}))
	in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"alpha"}}))
	in.Must(201, in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "Add a flag", "id": "T-1"}))
	in.Must(201, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "03-01", "tasks": []any{map[string]any{"description": "a step"}}}))

	var routes []string
	for path, ops := range doc.Paths {
		for method := range ops {
			routes = append(routes, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(routes)
	if len(routes) < 30 {
		t.Fatalf("the document lists %d routes: %v", len(routes), routes)
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		op := doc.Paths[path][strings.ToLower(method)]
		target := path
		query := url.Values{}
		for _, p := range op.Parameters {
			switch {
			case p.In == "path":
				target = strings.ReplaceAll(target, "{"+p.Name+"}", p.Example)
			case p.In == "query" && p.Name == "follow":
				query.Set("follow", "false")
			}
		}
		if strings.HasPrefix(path, "/api/") {
			query.Set("agent", "alpha")
			if method == "PATCH" || method == "DELETE" {
				query.Set("id", "msg-0")
				query.Set("action", "read")
			}
		}
		if len(query) > 0 {
			target += "?" + query.Encode()
		}
		var body any
		if op.RequestBody != nil {
			body = op.RequestBody.Content["application/json"].Example
		}
		token := ""
		if len(op.Security) > 0 {
			if _, ok := op.Security[0]["agent"]; ok {
				token = agentTok
			} else {
				token = blackbox.AdminToken
			}
		}
		r := in.Call(method, target, token, body)
		if path == "/v1/agents/{name}/token" && r.Status == 200 {
			r.Decode(t, &rotated) // the example agent's token was rotated
			agentTok = rotated.Token
		}
		if method == "DELETE" && path == "/v1/agents/{name}" && r.Status == 200 {
			agentTok = in.Agent("alpha") // the example agent was removed: add it back
		}
		switch {
		case r.Status >= 500:
			t.Errorf("%s (%s) answers %d: %s", route, target, r.Status, r.Body)
		case r.Status == 405, r.Status == 404 && strings.Contains(string(r.Body), "no route"):
			t.Errorf("%s (%s) is not served: %d %s", route, target, r.Status, r.Body)
		case r.Status == 401 || r.Status == 403:
			t.Errorf("%s: the documented security is wrong: %d %s", route, r.Status, r.Body)
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The README and every page of docs/ link only to files that exist, and
// to headings those files have; the README links to each page of docs/.
func TestDocumentationLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading := regexp.MustCompile("(?m)^#+ (.*)$")
	anchors := func(path string) []string {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var out []string
		for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
			out = append(out, githubAnchor(strings.ReplaceAll(m[1], "`", "")))
		}
		return out
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if page != "../README.md" && !strings.Contains(string(readme), "]("+strings.TrimPrefix(page, "../")+")") {
			t.Errorf("README.md does not link to %s", strings.TrimPrefix(page, "../"))
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if anchor != "" && !slices.Contains(anchors(path), anchor) {
				t.Errorf("%s links to %s: %s has no such heading (%v)", page, target, path, anchors(path))
			}
		}
	}
}

// What `wilco init` writes — with agents found on PATH and a test command,
// and with neither — is valid under docs/wilco.schema.json, and so is the
// file with its commented defaults switched on.
func TestInitWritesAConfigValidUnderTheSchema(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../docs/wilco.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatalf("docs/wilco.schema.json: %v", err)
	}
	jc := jsonschema.NewCompiler()
	if err := jc.AddResource("wilco.schema.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	compiled, err := jc.Compile("wilco.schema.json")
	if err != nil {
		t.Fatalf("docs/wilco.schema.json: %v", err)
	}
	schemaErrors := func(doc any) error {
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return compiled.Validate(v)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		path  string
		gomod bool
	}{{"an agent and a test command", bin + string(os.PathListSeparator) + os.Getenv("PATH"), true}, {"nothing found", bin + "/none", false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.gomod {
				if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example\n\ngo 1.22\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(blackbox.WilcoBin, "init")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+c.path)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("wilco init: %v\n%s", err, out)
			}
			written, err := os.ReadFile(filepath.Join(dir, "wilco.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if c.gomod && (!strings.Contains(string(written), "preset: claude-code") || !strings.Contains(string(written), "go test")) {
				t.Fatalf("wilco init did not detect the agent and the tests:\n%s", written)
			}
			// The commented defaults, switched on (examples to choose from,
			// "# Examples" up to a blank line, are not defaults).
			var on []string
			examples := false
			for line := range strings.SplitSeq(string(written), "\n") {
				examples = examples && line != "" || strings.HasPrefix(line, "# Examples")
				if rest, ok := strings.CutPrefix(line, "# "); ok && !examples && regexp.MustCompile(`^ *(- )?\{?[a-z_]+:`).MatchString(rest) {
					line = rest
				}
				on = append(on, line)
			}
			for _, text := range []string{string(written), strings.Join(on, "\n")} {
				var doc any
				if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
					t.Fatalf("%v\n%s", err, text)
				}
				if err := schemaErrors(doc); err != nil {
					t.Errorf("not valid under the schema: %v\n%s", err, text)
				}
			}
		})
	}
}
