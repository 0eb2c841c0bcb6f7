// Package wire is the model of wilco's HTTP API: the request and response
// bodies of every route, as Go types whose json tags are their wire form.
// The server builds and answers them, the Go client (package client)
// decodes them, and the OpenAPI document's schemas are generated from
// them (Schemas): one definition of each body, which the three cannot
// drift from.
//
// A type's JSON Schema follows from its Go form:
//
//   - a field is required unless its json tag says omitempty or omitzero;
//   - a pointer field without omitempty may be null; a slice or map field
//     is never null (the server answers [] and {});
//   - time.Time is an RFC 3339 date-time string, Duration a Go duration
//     string;
//   - a string type with a Values method is an enumeration of those
//     values, and a field's enum tag (comma-separated) narrows it to some
//     of them;
//   - a field's doc tag is its description, its format tag the format of
//     its string (a date-time kept as a string);
//   - a struct is a closed object (additionalProperties: false) unless its
//     AdditionalProperties method says that it takes fields it does not
//     name;
//   - a type with a JSONSchema method gives its own schema.
//
// The events' data are not here: they are core's event types, whose json
// tags are their wire form. Event is their envelope.
//
// The package imports only the standard library.
package wire
