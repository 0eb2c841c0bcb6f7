package wire

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is a body with a field of each kind the schemas tell apart.
type sample struct {
	ID       string            `json:"id" doc:"The id."`
	Note     string            `json:"note,omitempty"`
	At       time.Time         `json:"at"`
	Ended    time.Time         `json:"ended,omitzero"`
	Seen     *time.Time        `json:"seen"`
	Count    *int              `json:"count,omitempty"`
	State    TaskState         `json:"state"`
	Phase    *Phase            `json:"phase"`
	Only     DeliveryState     `json:"only" enum:"pending,sent"`
	Wait     Duration          `json:"wait"`
	Tags     []string          `json:"tags"`
	Stamp    string            `json:"stamp" format:"date-time"`
	By       map[string]int    `json:"by"`
	Any      map[string]any    `json:"any,omitempty"`
	Data     json.RawMessage   `json:"data"`
	Usage    Usage             `json:"usage"`
	Review   *Review           `json:"review"`
	Reviews  []Review          `json:"reviews,omitempty"`
	Inline   struct{ N int }   `json:"inline"`
	Skipped  string            `json:"-"`
	internal string            //nolint:unused // not on the wire
	Content  MaestroRawContent `json:"content"`
	embedded
}

type embedded struct {
	Extra string `json:"extra"`
}

type openSample struct {
	A string `json:"a"`
}

func (openSample) AdditionalProperties() bool { return true }

// The schema of a body follows its Go type: required unless omitempty or
// omitzero, null allowed for a pointer without omitempty, date-time
// strings, enumerations from Values (narrowed by an enum tag), a doc tag
// as the description, named structs as components, closed objects.
func TestASchemaFollowsItsTypesJSONTags(t *testing.T) {
	t.Parallel()
	s := NewSchemas("#/c/")
	ref := s.Ref(sample{})
	comps, err := s.Components()
	if err != nil {
		t.Fatal(err)
	}
	if ref["$ref"] != "#/c/sample" {
		t.Fatalf("ref %v", ref)
	}
	sch := comps["sample"].(map[string]any)
	props := sch["properties"].(map[string]any)
	prop := func(name string) string {
		b, _ := json.Marshal(props[name])
		return string(b)
	}
	for name, want := range map[string]string{
		"id":      `{"description":"The id.","type":"string"}`,
		"at":      `{"format":"date-time","type":"string"}`,
		"seen":    `{"format":"date-time","type":["string","null"]}`,
		"count":   `{"type":"integer"}`,
		"state":   `{"enum":["queued","awaiting_ack","clarifying","running","escalated","blocked","proposed","success","unverified","cancelled","stuck","skipped","aborted","failed"],"type":"string"}`,
		"phase":   `{"enum":["preparing","executing","verifying","retrying","replanning","reviewing","landing","pull_request",null],"type":["string","null"]}`,
		"only":    `{"enum":["pending","sent"],"type":"string"}`,
		"wait":    `{"description":"Go duration, such as \"30s\"","type":"string"}`,
		"tags":    `{"items":{"type":"string"},"type":"array"}`,
		"stamp":   `{"format":"date-time","type":"string"}`,
		"by":      `{"additionalProperties":{"type":"integer"},"type":"object"}`,
		"any":     `{"type":"object"}`,
		"data":    `{"type":"object"}`,
		"usage":   `{"$ref":"#/c/Usage"}`,
		"review":  `{"anyOf":[{"$ref":"#/c/Review"},{"type":"null"}]}`,
		"reviews": `{"items":{"$ref":"#/c/Review"},"type":"array"}`,
		"inline":  `{"additionalProperties":false,"properties":{"N":{"type":"integer"}},"required":["N"],"type":"object"}`,
		"content": `{"$ref":"#/c/MaestroContent"}`,
		"extra":   `{"type":"string"}`,
	} {
		if got := prop(name); got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
	}
	for _, name := range []string{"Skipped", "internal", "embedded"} {
		if _, ok := props[name]; ok {
			t.Errorf("%s is on the wire", name)
		}
	}
	required := sch["required"].([]string)
	want := []string{"id", "at", "seen", "state", "phase", "only", "wait", "tags", "stamp", "by", "data", "usage", "review", "inline", "content", "extra"}
	if strings.Join(required, " ") != strings.Join(want, " ") {
		t.Errorf("required %v\nwant     %v", required, want)
	}
	if sch["additionalProperties"] != false {
		t.Errorf("a struct's object takes fields it does not name: %v", sch["additionalProperties"])
	}
	if _, ok := comps["Review"]; !ok {
		t.Error("a struct a body refers to has no component")
	}
	if c := comps["MaestroContent"].(map[string]any); c["additionalProperties"] != nil {
		t.Errorf("an open struct's object is closed: %v", c["additionalProperties"])
	}
	s.Ref(openSample{})
	if comps, _ := s.Components(); comps["openSample"].(map[string]any)["additionalProperties"] != nil {
		t.Error("AdditionalProperties true still closes the object")
	}
}

// Two body types of one name, or an enum tag naming a value its type does
// not have, keep the schemas from being made.
func TestSchemasRefuseTwoTypesOfOneNameAndAnEnumTagOutsideItsType(t *testing.T) {
	t.Parallel()
	type Usage struct{ X int }
	s := NewSchemas("#/c/")
	s.Ref(Task{})
	s.Ref(Usage{})
	if _, err := s.Components(); err == nil || !strings.Contains(err.Error(), "two types are named Usage") {
		t.Errorf("a clash of names: %v", err)
	}
	type bad struct {
		State TaskState `json:"state" enum:"queued,asleep"`
	}
	s = NewSchemas("#/c/")
	s.Ref(bad{})
	if _, err := s.Components(); err == nil || !strings.Contains(err.Error(), `"asleep"`) {
		t.Errorf("an enum tag outside its type: %v", err)
	}
}

// Every enumeration's values are the constants of its type declared in
// this package, each once: a constant added to a type shows up in its
// schema, or this fails.
func TestEveryEnumerationsValuesAreTheConstantsOfItsType(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string][]string{}
	for _, f := range pkgs["wire"].Files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				id, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						consts[id.Name] = append(consts[id.Name], s)
					}
				}
			}
		}
	}
	enums := []enumeration{TaskState(""), Phase(""), PlanState(""), FailureType(""), Action(""), Verdict(""),
		ConsultationState(""), TranscriptKind(""), AgentStatus(""), Adapter(""), Preset(""), PromptMode(""), Handshake(""), Role(""),
		PaneState(""), MessageType(""), Policy(""), DeliveryState(""), ReplyType(""), Kind(""), OperationState(""), NotifyEvent(""),
		NotificationState(""), SessionVia(""), MaestroPriority(""), MaestroStatus(""), Code(""), LandHow("")}
	for _, e := range enums {
		name := reflect.TypeOf(e).Name()
		values := e.Values()
		if !slices.Equal(slices.Sorted(slices.Values(values)), slices.Compact(slices.Sorted(slices.Values(values)))) {
			t.Errorf("%s names a value twice: %v", name, values)
		}
		if got, want := slices.Sorted(slices.Values(values)), slices.Sorted(slices.Values(consts[name])); !slices.Equal(got, want) {
			t.Errorf("%s.Values() %v, its constants %v", name, got, want)
		}
		delete(consts, name)
	}
	for name := range consts {
		t.Errorf("%s has constants and is not among this test's enumerations", name)
	}
}
