package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"wilco/core"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// fileKeys lists every key of wilco.yaml, from the file's shape (the
// struct Encode writes): "policy.ack.backoff.base", "agents[].name".
func fileKeys(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		out = append(out, key)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, fileKeys(ft, key)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, fileKeys(ft.Elem(), key+"[]")...)
		}
	}
	return out
}

func readSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../docs/wilco.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("docs/wilco.schema.json: %v", err)
	}
	return s
}

// compiledSchema compiles docs/wilco.schema.json with a full JSON Schema
// 2020-12 validator.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../docs/wilco.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("docs/wilco.schema.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("wilco.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("wilco.schema.json")
	if err != nil {
		t.Fatalf("docs/wilco.schema.json: %v", err)
	}
	return s
}

// schemaErrors validates a document decoded from YAML: nil when it is
// valid, else the validator's error.
func schemaErrors(t *testing.T, s *jsonschema.Schema, doc any) []error {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		return []error{err}
	}
	return nil
}

// schemaKeys lists the keys the schema describes, in fileKeys' form, with
// the schema of each.
func schemaKeys(root, s map[string]any, prefix string, out map[string]map[string]any) {
	if ref, ok := s["$ref"].(string); ok {
		s = root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		p := p.(map[string]any)
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		out[key] = p
		schemaKeys(root, p, key, out)
		if items, ok := p["items"].(map[string]any); ok {
			schemaKeys(root, items, key+"[]", out)
		}
	}
}

// yamlKeys lists the keys a YAML document uses, in fileKeys' form (the
// names under agents[].env are the user's, not keys of the file).
func yamlKeys(n *yaml.Node, prefix string, out map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		p := prefix
		if n.Kind == yaml.SequenceNode {
			p += "[]"
		}
		for _, c := range n.Content {
			yamlKeys(c, p, out)
		}
	case yaml.MappingNode:
		if strings.HasSuffix(prefix, ".env") {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if prefix != "" {
				key = prefix + "." + key
			}
			out[key] = true
			yamlKeys(n.Content[i+1], key, out)
		}
	}
}

// The schema, the reference file and docs/CONFIG.md describe exactly the
// keys of wilco.yaml: a key added to the file's shape fails this test until
// it is documented everywhere.
func TestEveryConfigKeyIsInTheSchemaTheReferenceAndTheDocs(t *testing.T) {
	t.Parallel()
	keys := fileKeys(reflect.TypeFor[file](), "")
	slices.Sort(keys)

	schema := readSchema(t)
	described := map[string]map[string]any{}
	schemaKeys(schema, schema, "", described)
	var inSchema []string
	for k := range described {
		inSchema = append(inSchema, k)
	}
	slices.Sort(inSchema)
	if !slices.Equal(keys, inSchema) {
		t.Errorf("the keys of wilco.yaml and of docs/wilco.schema.json differ:\nfile   %v\nschema %v", keys, inSchema)
	}

	var ref yaml.Node
	data, err := os.ReadFile("testdata/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	yamlKeys(&ref, "", used)
	for _, k := range keys {
		if !used[k] {
			t.Errorf("the reference file testdata/reference.yaml does not show %s", k)
		}
	}

	doc, err := os.ReadFile("../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			t.Errorf("docs/CONFIG.md has no row for `%s`", k)
		}
	}
}

// render writes a value the way docs/CONFIG.md shows defaults.
func render(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// leaves maps each key of a decoded document to its value.
func leaves(v any, prefix string, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		out[prefix] = v
		return
	}
	for k, e := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		leaves(e, key, out)
	}
}

func docRow(t *testing.T, doc, key string) string {
	t.Helper()
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line
		}
	}
	return ""
}

// The defaults the schema and docs/CONFIG.md give are the configuration
// package's: what Encode writes for the default configuration, and what
// Parse fills in for an exec agent.
func TestConfigDefaultsAreDocumented(t *testing.T) {
	t.Parallel()
	schema := readSchema(t)
	described := map[string]map[string]any{}
	schemaKeys(schema, schema, "", described)
	docBytes, err := os.ReadFile("../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(docBytes)

	data, err := Default().Encode()
	if err != nil {
		t.Fatal(err)
	}
	var defaults any
	if err := yaml.Unmarshal(data, &defaults); err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	leaves(defaults, "", values)
	a, err := Parse("wilco.yaml", []byte("agents:\n  - {name: a, adapter: exec, command: [x]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	values["agents[].prompt"], values["agents[].handshake"] = a.Agents[0].Prompt, a.Agents[0].Handshake
	delete(values, "agents")
	checked := 0
	for key, want := range values {
		s, ok := described[key]
		if !ok {
			t.Errorf("%s: not in the schema", key)
			continue
		}
		if got, ok := s["default"]; !ok || render(got) != render(want) {
			t.Errorf("%s: the schema's default is %v, the configuration's %v", key, got, want)
		}
		if row := docRow(t, doc, key); !strings.Contains(row, "`"+render(want)+"`") {
			t.Errorf("docs/CONFIG.md: the row of %s does not give its default `%s`: %q", key, render(want), row)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d defaults checked", checked)
	}
	for key, s := range described {
		if _, ok := s["default"]; ok {
			if _, known := values[key]; !known {
				t.Errorf("%s: the schema gives a default the configuration does not have", key)
			}
		}
	}
}

// yamlBlocks returns the ```yaml blocks of a Markdown file.
func yamlBlocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// fuzzInputs reads the committed corpus of FuzzParse.
func fuzzInputs(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/fuzz/FuzzParse/*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 3)
		if len(lines) < 2 || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s: not a corpus file", f)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = []byte(s)
	}
	return out
}

// Every configuration wilco ships — the reference file, the examples of
// the documentation, the configurations the fuzz corpus holds that wilco
// accepts, and what Encode writes of them — is valid under the schema, and
// the refused reference file is not.
func TestShippedConfigsMatchTheSchema(t *testing.T) {
	t.Parallel()
	compiled := compiledSchema(t)
	inputs := map[string][]byte{}
	for _, f := range []string{"testdata/reference.yaml", "testdata/bad.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = data
	}
	for _, md := range []string{"../docs/CONFIG.md", "../docs/AGENTS.md", "../README.md"} {
		for i, b := range yamlBlocks(t, md) {
			if strings.Contains(b, "agents:") {
				inputs[fmt.Sprintf("%s yaml block %d", md, i+1)] = []byte(b)
			}
		}
	}
	for f, data := range fuzzInputs(t) {
		inputs[f] = data
	}
	accepted := 0
	for name, data := range inputs {
		c, parseErr := Parse(name, data)
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil && parseErr == nil {
			t.Fatalf("%s: %v", name, err)
		}
		errs := schemaErrors(t, compiled, doc)
		switch {
		case strings.HasPrefix(name, "../") && parseErr != nil:
			t.Errorf("%s: the documentation's example is refused: %v", name, parseErr)
		case name == "testdata/bad.yaml" && len(errs) == 0:
			t.Errorf("%s: valid under the schema", name)
		case parseErr == nil && len(errs) > 0:
			t.Errorf("%s: accepted by wilco but not valid under the schema: %v", name, errs)
		}
		if parseErr != nil {
			continue
		}
		accepted++
		enc, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var encoded any
		if err := yaml.Unmarshal(enc, &encoded); err != nil {
			t.Fatal(err)
		}
		if errs := schemaErrors(t, compiled, encoded); len(errs) > 0 {
			t.Errorf("%s: what Encode writes is not valid under the schema: %v\n%s", name, errs, enc)
		}
	}
	if accepted < 5 {
		t.Fatalf("only %d configurations accepted", accepted)
	}
}

// The schema's enumerations are the configuration package's.
func TestConfigSchemaEnumsAreTheConfigs(t *testing.T) {
	t.Parallel()
	schema := readSchema(t)
	described := map[string]map[string]any{}
	schemaKeys(schema, schema, "", described)
	for key, want := range map[string][]string{
		"agents[].adapter": Adapters, "agents[].preset": Presets, "agents[].prompt": Prompts, "agents[].handshake": Handshakes,
		"land.how": core.LandHows, "land.order": core.LandOrders, "land.merge": LandMerges, "land.merge_method": LandMergeMethods,
	} {
		var got []string
		for _, v := range described[key]["enum"].([]any) {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the schema has %v, the configuration %v", key, got, want)
		}
	}
}
