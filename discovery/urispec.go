package discovery

import (
	"fmt"
	"strconv"
	"strings"
)

// URISpec is curator-x-discovery's UriSpec: a URI template of literal
// parts and variables, written as {"parts":[{"value":..,"variable":..}]}.
// Its text form (ParseURISpec, String) puts variables in braces:
// "{scheme}://{address}:{port}/api".
type URISpec struct {
	Parts []URIPart `json:"parts"`
}

// URIPart is one part of a URISpec: a literal, or the name of a variable.
type URIPart struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// The variables Build fills from the instance (Curator's UriSpec fields).
const (
	FieldScheme           = "scheme" // "https" when the instance has an SSL port, else "http"
	FieldName             = "name"
	FieldID               = "id"
	FieldAddress          = "address"
	FieldPort             = "port"
	FieldSSLPort          = "ssl-port"
	FieldRegistrationTime = "registration-time-utc" // milliseconds
	FieldServiceType      = "service-type"          // lower case
	FieldOpenBrace        = "["                     // a literal "{"
	FieldCloseBrace       = "]"                     // a literal "}"
)

// ParseURISpec parses a URI template as Curator's UriSpec(String) does:
// text in braces is a variable (trimmed), the rest literal; empty parts are
// dropped. It fails, wrapping ErrInvalidInstance, on a "{" inside a
// variable, a "}" outside one, or an unclosed variable. Pure.
func ParseURISpec(raw string) (*URISpec, error) {
	u := &URISpec{Parts: []URIPart{}}
	inside := false
	var cur strings.Builder
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		v := cur.String()
		if inside {
			v = strings.TrimSpace(v)
		}
		u.Parts = append(u.Parts, URIPart{Value: v, Variable: inside})
		cur.Reset()
	}
	for _, r := range raw {
		switch r {
		case '{':
			if inside {
				return nil, fmt.Errorf("%w: uri spec %q: { inside a variable", ErrInvalidInstance, raw)
			}
			flush()
			inside = true
		case '}':
			if !inside {
				return nil, fmt.Errorf("%w: uri spec %q: } without {", ErrInvalidInstance, raw)
			}
			flush()
			inside = false
		default:
			cur.WriteRune(r)
		}
	}
	if inside {
		return nil, fmt.Errorf("%w: uri spec %q: variable not closed", ErrInvalidInstance, raw)
	}
	flush()
	return u, nil
}

// String returns the template's text form, variables in braces (a
// variable with an empty name as "{ }", which parses back to it). A part
// read from JSON may hold what the text form cannot say (a brace in a
// literal, spaces around a variable's name); Parts is the exact form.
// Pure.
func (u *URISpec) String() string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range u.Parts {
		if p.Variable && p.Value == "" {
			b.WriteString("{ }")
		} else if p.Variable {
			b.WriteString("{" + p.Value + "}")
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// Build fills the template as Curator's UriSpec.build(instance, variables)
// does: the instance's fields (see the Field constants; a field that is
// null in Java, such as a zero port, is ""), overridden by vars; a variable
// with no value is left out. A nil URISpec builds "". Pure.
func (u *URISpec) Build(inst Instance, vars map[string]string) string {
	if u == nil {
		return ""
	}
	scheme := "http"
	if inst.SSLPort != 0 {
		scheme = "https"
	}
	local := map[string]string{
		FieldOpenBrace:        "{",
		FieldCloseBrace:       "}",
		FieldScheme:           scheme,
		FieldName:             inst.Name,
		FieldID:               inst.ID,
		FieldAddress:          inst.Address,
		FieldPort:             portText(inst.Port),
		FieldSSLPort:          portText(inst.SSLPort),
		FieldRegistrationTime: strconv.FormatInt(millis(inst.RegistrationTime), 10),
		FieldServiceType:      strings.ToLower(string(inst.ServiceType)),
	}
	for k, v := range vars {
		local[k] = v
	}
	var b strings.Builder
	for _, p := range u.Parts {
		if !p.Variable {
			b.WriteString(p.Value)
		} else if v, ok := local[p.Value]; ok {
			b.WriteString(v)
		}
	}
	return b.String()
}

func portText(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// MarshalJSON writes {"parts":[...]}, with [] for no parts (Curator fails
// to read "parts":null). Pure.
func (u URISpec) MarshalJSON() ([]byte, error) {
	parts := u.Parts
	if parts == nil {
		parts = []URIPart{}
	}
	return encode(struct {
		Parts []URIPart `json:"parts"`
	}{parts})
}
