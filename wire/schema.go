package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Schemas generates the JSON Schemas (draft 2020-12, the dialect of
// OpenAPI 3.1) of Go types from their form, as the package's
// documentation says, and collects the component schemas they refer to:
// one per struct type, by its name.
type Schemas struct {
	prefix     string
	components map[string]any
	types      map[string]reflect.Type
	errs       []error
}

// NewSchemas returns a set of no schema whose references start with
// prefix ("#/components/schemas/").
func NewSchemas(prefix string) *Schemas {
	return &Schemas{prefix: prefix, components: map[string]any{}, types: map[string]reflect.Type{}}
}

// A schemer gives its own schema.
type schemer interface {
	JSONSchema(*Schemas) map[string]any
}

// An enumeration has a documented set of values.
type enumeration interface {
	Values() []string
}

// An opener says whether its object takes fields it does not name.
type opener interface {
	AdditionalProperties() bool
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	rawType     = reflect.TypeFor[json.RawMessage]()
	schemerType = reflect.TypeFor[schemer]()
	enumType    = reflect.TypeFor[enumeration]()
	openerType  = reflect.TypeFor[opener]()
)

// Ref is the schema of a body of v's type: a reference to its component
// for a struct or a type that gives its own schema (the component is
// made), the schema itself for the others.
func (s *Schemas) Ref(v any) map[string]any {
	t := reflect.TypeOf(v)
	if t == nil {
		return map[string]any{}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" && (t.Kind() == reflect.Struct && t != timeType || t.Implements(schemerType)) {
		return s.component(t)
	}
	return s.schema(t)
}

// Components returns the component schemas made so far, by name, and
// what kept one from being made: two types of the same name, an enum tag
// naming a value its type does not have.
func (s *Schemas) Components() (map[string]any, error) {
	return maps.Clone(s.components), errors.Join(s.errs...)
}

// component makes t's component, once, and returns a reference to it.
func (s *Schemas) component(t reflect.Type) map[string]any {
	name := t.Name()
	ref := map[string]any{"$ref": s.prefix + name}
	if have, ok := s.types[name]; ok {
		if have != t {
			s.errs = append(s.errs, fmt.Errorf("wire: two types are named %s: %s and %s", name, have, t))
		}
		return ref
	}
	s.types[name] = t
	s.components[name] = map[string]any{} // while it is made: a type may refer to itself
	if t.Implements(schemerType) {
		s.components[name] = reflect.Zero(t).Interface().(schemer).JSONSchema(s)
	} else {
		s.components[name] = s.object(t)
	}
	return ref
}

// schema is the schema of a value of type t where a field holds it: a
// reference for a named struct, the schema itself for the others. Each
// call returns a new map.
func (s *Schemas) schema(t reflect.Type) map[string]any {
	if t.Implements(schemerType) {
		return maps.Clone(reflect.Zero(t).Interface().(schemer).JSONSchema(s))
	}
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case rawType:
		return map[string]any{"type": "object"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.schema(t.Elem())
	case reflect.Struct:
		if t.Name() != "" {
			return s.component(t)
		}
		return s.object(t)
	case reflect.String:
		m := map[string]any{"type": "string"}
		if t.Implements(enumType) {
			m["enum"] = reflect.Zero(t).Interface().(enumeration).Values()
		}
		return m
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": s.schema(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return map[string]any{"type": "object"}
		}
		return map[string]any{"type": "object", "additionalProperties": s.schema(t.Elem())}
	}
	return map[string]any{} // an interface: any JSON
}

// object is the schema of struct type t: its fields by their json names,
// those without omitempty or omitzero required.
func (s *Schemas) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	s.fields(t, props, &required)
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	if !t.Implements(openerType) || !reflect.Zero(t).Interface().(opener).AdditionalProperties() {
		o["additionalProperties"] = false
	}
	return o
}

func (s *Schemas) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				s.fields(ft, props, required) // its fields are promoted
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		sch := s.schema(f.Type)
		if e := f.Tag.Get("enum"); e != "" {
			sch["enum"] = s.subset(t, f, strings.Split(e, ","))
		}
		if f.Type.Kind() == reflect.Pointer && !f.Type.Implements(schemerType) && !optional {
			sch = nullable(sch)
		}
		if format := f.Tag.Get("format"); format != "" {
			sch["format"] = format
		}
		if d := f.Tag.Get("doc"); d != "" {
			sch["description"] = d
		}
		props[name] = sch
		if !optional {
			*required = append(*required, name)
		}
	}
}

// subset checks that the values of field f's enum tag are values of its
// type.
func (s *Schemas) subset(t reflect.Type, f reflect.StructField, tagged []string) []string {
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Implements(enumType) {
		all := reflect.Zero(ft).Interface().(enumeration).Values()
		for _, v := range tagged {
			if !slices.Contains(all, v) {
				s.errs = append(s.errs, fmt.Errorf("wire: %s.%s: enum tag value %q is no %s", t.Name(), f.Name, v, ft.Name()))
			}
		}
	}
	return tagged
}

// nullable is sch that may also be null.
func nullable(sch map[string]any) map[string]any {
	typ, ok := sch["type"].(string)
	if !ok {
		if len(sch) == 0 {
			return sch // any JSON, null included
		}
		return map[string]any{"anyOf": []any{sch, map[string]any{"type": "null"}}}
	}
	sch["type"] = []string{typ, "null"}
	if e, ok := sch["enum"].([]string); ok {
		vs := make([]any, 0, len(e)+1)
		for _, v := range e {
			vs = append(vs, v)
		}
		sch["enum"] = append(vs, nil)
	}
	return sch
}
