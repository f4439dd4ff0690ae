// lenient.go: the receiver leniency the pinned schema asks for beyond
// lenient capability objects (acp-v1 §4, §23.1): an optional member
// marked x-deserialize-default-on-error that does not decode is absent,
// while a malformed required member still fails the request.

package acp

import (
	"encoding/json"
	"slices"
)

// dropMalformed decodes the JSON object b again after dec failed on it
// with err: each member named in optional whose value alone fails dec is
// dropped, and what is left is decoded. carry names members (a union's
// tag) that every probe needs besides the member it tries. When no
// optional member is to blame, err is returned. Decoders call it only
// after their first attempt failed, so a well-formed message is scanned
// once.
func dropMalformed[T any](b []byte, err error, dec func([]byte) (T, error), carry []string, optional ...string) (T, error) {
	var zero T
	var members map[string]json.RawMessage
	if json.Unmarshal(b, &members) != nil {
		return zero, err
	}
	dropped := false
	for _, name := range optional {
		raw, ok := members[name]
		if !ok {
			continue
		}
		probe := map[string]json.RawMessage{name: raw}
		for _, k := range carry {
			if v, ok := members[k]; ok {
				probe[k] = v
			}
		}
		one, merr := json.Marshal(probe)
		if merr != nil {
			continue
		}
		if _, perr := dec(one); perr != nil {
			delete(members, name)
			dropped = true
		}
	}
	if !dropped {
		return zero, err
	}
	rest, merr := json.Marshal(members)
	if merr != nil {
		return zero, err
	}
	return dec(rest)
}

// optionalBlockMembers are the members of each content block that the
// schema drops when malformed (x-deserialize-default-on-error).
var optionalBlockMembers = map[string][]string{
	ContentTypeText:         {"annotations"},
	ContentTypeImage:        {"annotations", "uri"},
	ContentTypeAudio:        {"annotations"},
	ContentTypeResourceLink: {"annotations", "description", "mimeType", "size", "title"},
	ContentTypeResource:     {"annotations"},
}

// UnmarshalJSON implements json.Unmarshaler: a non-object fails (so the
// block drops the whole member), and inside an object a malformed member
// is absent and an audience item that is not a Role is skipped.
func (a *Annotations) UnmarshalJSON(b []byte) error {
	var w struct {
		Audience     json.RawMessage `json:"audience"`
		Priority     json.RawMessage `json:"priority"`
		LastModified json.RawMessage `json:"lastModified"`
		Meta         Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	audience, _ := decodeList(w.Audience, func(b []byte) (Role, error) {
		r, err := decodeJSON[Role](b)
		if err == nil && !slices.Contains([]Role{RoleUser, RoleAssistant}, r) {
			err = invalidField("audience", "not a role")
		}
		return r, err
	}, true)
	*a = Annotations{Audience: audience, Priority: decodeOptional[float64](w.Priority), Meta: w.Meta}
	if p := decodeOptional[string](w.LastModified); p != nil {
		a.LastModified = *p
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler; a malformed title is absent.
func (i *Implementation) UnmarshalJSON(b []byte) error {
	type alias Implementation
	dec := func(b []byte) (alias, error) { return decodeJSON[alias](b) }
	v, err := dec(b)
	if err != nil {
		v, err = dropMalformed(b, err, dec, nil, "title")
	}
	if err == nil {
		*i = Implementation(v)
	}
	return err
}
