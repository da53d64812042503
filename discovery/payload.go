package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JavaPayload returns v's JSON object with "@class": class as its first
// field: the form in which Jackson writes a Java object payload, and the
// one a Curator ServiceDiscovery whose payload class is a Java type (not
// Object or Map) needs in order to read the payload at all (without
// "@class" it reads a LinkedHashMap and fails its payload class check, and
// with it the whole query). v must marshal to a JSON object without an
// "@class" field of its own; otherwise the error wraps ErrInvalidInstance.
// Pure.
func JavaPayload(class string, v any) (json.RawMessage, error) {
	if class == "" {
		return nil, fmt.Errorf("%w: empty Java class name", ErrInvalidInstance)
	}
	body, err := encode(v)
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrInvalidInstance, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("%w: payload of class %s is not a JSON object", ErrInvalidInstance, class)
	}
	if _, ok := fields["@class"]; ok {
		return nil, fmt.Errorf("%w: payload already has an @class field", ErrInvalidInstance)
	}
	name, _ := encode(class)
	out := append([]byte(`{"@class":`), name...)
	if rest := bytes.TrimSpace(body[1:]); len(rest) > 1 { // more than "}"
		out = append(out, ',')
		out = append(out, rest...)
		return out, nil
	}
	return append(out, '}'), nil
}

// DecodePayload decodes the instance's payload into v (json.Unmarshal),
// reading Jackson's wrapper form ["java.lang.Long", 5] as its value (5); an
// object's "@class" field is an ordinary field to json.Unmarshal (a struct
// without such a field ignores it). A null or missing payload leaves v
// unchanged. Pure.
func (inst Instance) DecodePayload(v any) error {
	p := bytes.TrimSpace(inst.Payload)
	if len(p) == 0 || string(p) == "null" {
		return nil
	}
	if _, value, ok := wrapper(p); ok {
		p = value
	}
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("discovery: payload of %s/%s: %w", inst.Name, inst.ID, err)
	}
	return nil
}

// PayloadClass returns the Java class that Jackson's type information in
// the payload names ("@class" of an object, the first element of the
// wrapper form), or "" when it names none (null, a string, a number, a
// boolean or an object without "@class"). Pure.
func (inst Instance) PayloadClass() string {
	p := bytes.TrimSpace(inst.Payload)
	if class, _, ok := wrapper(p); ok {
		return class
	}
	var obj struct {
		Class *string `json:"@class"`
	}
	if len(p) > 0 && p[0] == '{' && json.Unmarshal(p, &obj) == nil && obj.Class != nil {
		return *obj.Class
	}
	return ""
}

// wrapper splits Jackson's wrapper-array form ["<class>", value].
func wrapper(p []byte) (class string, value json.RawMessage, ok bool) {
	if len(p) == 0 || p[0] != '[' {
		return "", nil, false
	}
	var elems []json.RawMessage
	if json.Unmarshal(p, &elems) != nil || len(elems) != 2 {
		return "", nil, false
	}
	if json.Unmarshal(elems[0], &class) != nil {
		return "", nil, false
	}
	return class, elems[1], true
}

// checkPayload reports a payload that Curator 5.4's reader would fail on,
// which would fail its whole queryForInstances of the service: invalid
// JSON, an array other than the wrapper form ["<class>", value], or an
// object whose "@class" is not a string. (A "@class" naming a class the
// Java side lacks fails there too; that cannot be checked here.) Pure.
func checkPayload(p json.RawMessage) error {
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return nil
	}
	if !json.Valid(p) {
		return fmt.Errorf("%w: payload is not valid JSON", ErrInvalidInstance)
	}
	switch p[0] {
	case '[':
		if _, _, ok := wrapper(p); !ok {
			return fmt.Errorf("%w: an array payload must be Jackson's [\"<java class>\", value]: Curator cannot read any other", ErrInvalidInstance)
		}
	case '{':
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(p, &obj) // valid
		if c, ok := obj["@class"]; ok {
			var s string
			if json.Unmarshal(c, &s) != nil || s == "" {
				return fmt.Errorf("%w: payload's @class must be a Java class name", ErrInvalidInstance)
			}
		}
	}
	return nil
}
