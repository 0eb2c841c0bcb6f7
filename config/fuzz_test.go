package config

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse reads any bytes as wilco.yaml. A refusal is a list of *Error,
// each naming the file and saying what is wrong; an accepted configuration
// is valid (every agent passes its check) and survives Encode and Parse
// again unchanged.
//
//	go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=30s ./config
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("wilco.yaml", data)
		if err != nil {
			if c != nil {
				t.Fatalf("a config and an error: %v", err)
			}
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var ce *Error
				if !errors.As(e, &ce) || ce.File != "wilco.yaml" || ce.Msg == "" || ce.Line < 0 {
					t.Fatalf("error %T %q is not a *Error of wilco.yaml with a message", e, e)
				}
			}
			return
		}
		if c == nil || len(c.Agents) == 0 {
			t.Fatalf("accepted without agents: %+v", c)
		}
		for _, a := range c.Agents {
			if err := a.Check(); err != nil {
				t.Fatalf("accepted agent %s fails its check: %v", a.Name, err)
			}
		}
		out, err := c.Encode()
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		back, err := Parse("encoded.yaml", out)
		if err != nil {
			t.Fatalf("Parse(Encode(c)): %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalConfig(c), normalConfig(back)) {
			t.Fatalf("Parse(Encode(c)) differs:\n%+v\n%+v\n%s", c, back, out)
		}
		again, err := back.Encode()
		if err != nil || string(again) != string(out) {
			t.Fatalf("Encode is not stable: %v\n%s\n%s", err, out, again)
		}
	})
}

// normalConfig treats empty and missing lists and maps alike, as YAML does.
func normalConfig(c *Config) *Config {
	n := *c
	n.Agents = nil
	for _, a := range c.Agents {
		if len(a.Env) == 0 {
			a.Env = nil
		}
		if len(a.Command) == 0 {
			a.Command = nil
		}
		if len(a.Capabilities) == 0 {
			a.Capabilities = nil
		}
		n.Agents = append(n.Agents, a)
	}
	if len(n.Verify.Steps) == 0 {
		n.Verify.Steps = nil
	}
	// Warnings name the file and the line they come from, which Encode
	// changes.
	n.Warnings = nil
	return &n
}
