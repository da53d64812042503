package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ServiceType is curator-x-discovery's ServiceType, written by its Java
// name. A value read from a node is kept as written, so a type added by a
// later Curator survives a read and a write back.
type ServiceType string

// The service types of Curator 5.4.
const (
	// Dynamic: an EPHEMERAL node, gone with its session; the Registration
	// re-creates it on the next session. Register's default.
	Dynamic ServiceType = "DYNAMIC"
	// DynamicSequential: an EPHEMERAL_SEQUENTIAL node (its name is the id
	// plus a sequence number). Read like the others; Register refuses it.
	DynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL"
	// Static: a PERSISTENT node; it stays after its session ends, until
	// unregistered.
	Static ServiceType = "STATIC"
	// Permanent: a PERSISTENT node, as Static.
	Permanent ServiceType = "PERMANENT"
)

// IsDynamic reports whether t is Dynamic or DynamicSequential (an
// ephemeral node), as Curator's ServiceType.isDynamic. Pure.
func (t ServiceType) IsDynamic() bool { return t == Dynamic || t == DynamicSequential }

// Instance is one registered instance of a service: curator-x-discovery's
// ServiceInstance, as its JsonInstanceSerializer writes it. The zero value
// of each field stands for Java's null (or Curator's default), so that a
// node written by Curator, read and written back, keeps its meaning:
//
//	Name, ID          "name", "id" (required to register)
//	Address           "address"; "" is written as null
//	Port, SSLPort     "port", "sslPort"; 0 is written as null (and a 0 read is kept as 0)
//	Payload           "payload", raw JSON; nil is written as null
//	RegistrationTime  "registrationTimeUTC", milliseconds since the Unix epoch; the zero time is 0
//	ServiceType       "serviceType"; "" is written as null (Register makes it Dynamic)
//	URISpec           "uriSpec"; nil is written as null
//	Disabled          "enabled": omitted while enabled, as Curator's default serializer
//	                  does (a missing "enabled" reads as enabled); false when Disabled.
//	                  Curator 5.4 reads "enabled":null as disabled, and so does Unmarshal.
//	Extra             any other field, kept as read and written back after the known ones
//
// Payload and Extra values are kept compact (whitespace between tokens
// dropped), as Jackson writes them.
//
// Payload carries the exact JSON, Jackson's type information included:
// Curator declares its payload with @JsonTypeInfo(use = CLASS), so a Java
// object payload carries "@class" as its first field, a List or a Long is
// written as ["java.util.ArrayList", [...]] or ["java.lang.Long", 5], and a
// String, Integer, Double or Boolean is written bare. DecodePayload reads it
// into a Go value; JavaPayload writes an object with its "@class".
type Instance struct {
	Name             string
	ID               string
	Address          string
	Port             int
	SSLPort          int
	Payload          json.RawMessage
	RegistrationTime time.Time
	ServiceType      ServiceType
	URISpec          *URISpec
	Disabled         bool
	// Extra holds fields this package does not know (a later Curator's),
	// by name, as raw JSON. They are written back, in name order, after
	// the known fields. A key naming a known field is an error to Marshal.
	Extra map[string]json.RawMessage
}

// knownFields are the JSON names of Instance's fields, in the order Jackson
// writes them.
var knownFields = []string{"name", "id", "address", "port", "sslPort", "payload",
	"registrationTimeUTC", "serviceType", "uriSpec", "enabled"}

// wireInstance is Instance in Curator's field order and null handling.
type wireInstance struct {
	Name                string          `json:"name"`
	ID                  string          `json:"id"`
	Address             *string         `json:"address"`
	Port                *int            `json:"port"`
	SSLPort             *int            `json:"sslPort"`
	Payload             json.RawMessage `json:"payload"`
	RegistrationTimeUTC int64           `json:"registrationTimeUTC"`
	ServiceType         *ServiceType    `json:"serviceType"`
	URISpec             *URISpec        `json:"uriSpec"`
	Enabled             *bool           `json:"enabled,omitempty"`
}

// MarshalJSON writes inst as curator-x-discovery's JsonInstanceSerializer
// does by default (Curator 5.4: no "enabled" field unless Disabled), fields
// in Jackson's order, no HTML escaping, then the Extra fields. It fails,
// wrapping ErrInvalidInstance, when Payload or an Extra value is not valid
// JSON or an Extra key names a known field. Pure.
func (inst Instance) MarshalJSON() ([]byte, error) {
	w := wireInstance{
		Name:                inst.Name,
		ID:                  inst.ID,
		Payload:             inst.Payload,
		RegistrationTimeUTC: millis(inst.RegistrationTime),
		URISpec:             inst.URISpec,
	}
	if inst.Address != "" {
		w.Address = &inst.Address
	}
	if inst.Port != 0 {
		w.Port = &inst.Port
	}
	if inst.SSLPort != 0 {
		w.SSLPort = &inst.SSLPort
	}
	if len(bytes.TrimSpace(inst.Payload)) == 0 {
		w.Payload = nil // written as null
	} else if !json.Valid(inst.Payload) {
		return nil, fmt.Errorf("%w: payload is not valid JSON", ErrInvalidInstance)
	}
	if inst.ServiceType != "" {
		w.ServiceType = &inst.ServiceType
	}
	if inst.Disabled {
		f := false
		w.Enabled = &f
	}
	out, err := encode(w)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInstance, err)
	}
	if len(inst.Extra) == 0 {
		return out, nil
	}
	keys := make([]string, 0, len(inst.Extra))
	for k := range inst.Extra {
		if slices.Contains(knownFields, k) {
			return nil, fmt.Errorf("%w: Extra field %q is a known field", ErrInvalidInstance, k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out = out[:len(out)-1] // the closing brace
	for _, k := range keys {
		v := bytes.TrimSpace(inst.Extra[k])
		if len(v) == 0 {
			v = []byte("null")
		}
		key, _ := encode(k) // a string always encodes
		out = append(out, ',')
		out = append(out, key...)
		out = append(out, ':')
		var kv bytes.Buffer
		if err := json.Compact(&kv, v); err != nil {
			return nil, fmt.Errorf("%w: Extra field %q is not valid JSON", ErrInvalidInstance, k)
		}
		out = append(out, kv.Bytes()...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads an instance as curator-x-discovery 5.4's
// JsonInstanceSerializer does: every field may be missing or null (a
// missing "serviceType" is Dynamic, a missing "enabled" is enabled, a null
// "enabled" is disabled), unknown fields are kept in Extra. It fails,
// wrapping ErrMalformed, when data is not a JSON object or a known field
// has the wrong JSON type. Pure.
func (inst *Instance) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if fields == nil {
		return fmt.Errorf("%w: null", ErrMalformed)
	}
	out := Instance{ServiceType: Dynamic}
	isNull := func(v json.RawMessage) bool { return string(v) == "null" }
	bad := func(name string, err error) error {
		return fmt.Errorf("%w: field %q: %v", ErrMalformed, name, err)
	}
	for k, v := range fields {
		var err error
		switch k {
		case "name":
			err = optional(v, &out.Name)
		case "id":
			err = optional(v, &out.ID)
		case "address":
			err = optional(v, &out.Address)
		case "port":
			err = optional(v, &out.Port)
		case "sslPort":
			err = optional(v, &out.SSLPort)
		case "payload":
			if !isNull(v) {
				out.Payload = compact(v)
			}
		case "registrationTimeUTC":
			var ms int64
			ms, err = parseMillis(v)
			if ms != 0 {
				out.RegistrationTime = time.UnixMilli(ms)
			}
		case "serviceType":
			out.ServiceType = ""
			err = optional(v, &out.ServiceType)
		case "uriSpec":
			if !isNull(v) {
				out.URISpec = new(URISpec)
				err = json.Unmarshal(v, out.URISpec)
				if out.URISpec.Parts == nil {
					out.URISpec.Parts = []URIPart{} // as written back, and as ParseURISpec makes it
				}
			}
		case "enabled":
			enabled := false // Jackson gives a null boolean its default
			err = optional(v, &enabled)
			out.Disabled = !enabled
		default:
			if out.Extra == nil {
				out.Extra = make(map[string]json.RawMessage)
			}
			out.Extra[k] = compact(v)
		}
		if err != nil {
			return bad(k, err)
		}
	}
	*inst = out
	return nil
}

// encode is json.Marshal without HTML escaping, as Jackson writes: "<",
// ">" and "&" stay as they are.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// compact returns a compact copy of v, which is valid JSON.
func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return slices.Clone(v)
	}
	return b.Bytes()
}

// optional decodes v into dst unless v is null (dst keeps its value).
func optional[T any](v json.RawMessage, dst *T) error {
	if string(v) == "null" {
		return nil
	}
	return json.Unmarshal(v, dst)
}

// parseMillis reads a JSON number of milliseconds (null is 0); a fraction
// is dropped, as Jackson does for a long.
func parseMillis(v json.RawMessage) (int64, error) {
	if string(v) == "null" {
		return 0, nil
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, err
	}
	if ms, err := n.Int64(); err == nil {
		return ms, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f >= 1<<63 || f < -(1<<63) {
		return 0, fmt.Errorf("%s is not a long", n)
	}
	return int64(f), nil
}

// millis is t in milliseconds since the Unix epoch, 0 for the zero time.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Marshal returns inst's JSON (MarshalJSON). Pure.
func Marshal(inst Instance) ([]byte, error) { return inst.MarshalJSON() }

// Unmarshal parses an instance's JSON (UnmarshalJSON). Pure.
func Unmarshal(data []byte) (Instance, error) {
	var inst Instance
	err := inst.UnmarshalJSON(data)
	return inst, err
}

// Equal reports whether a and b write the same JSON. Pure.
func (inst Instance) Equal(other Instance) bool {
	a, errA := inst.MarshalJSON()
	b, errB := other.MarshalJSON()
	return errA == nil && errB == nil && bytes.Equal(a, b)
}
