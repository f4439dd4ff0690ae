// config.go: session config options and session/set_config_option
// (acp-v1 §16).

package acp

import (
	"encoding/json"
	"fmt"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// SessionConfigOption is one per-session setting (acp-v1 §16.1):
// *SelectConfigOption or *BooleanConfigOption, tagged by `type`.
type SessionConfigOption interface {
	// OptionID returns the option's id.
	OptionID() string
	isSessionConfigOption()
}

// SelectConfigOption is a `type: "select"` option.
type SelectConfigOption struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	Category     string        `json:"category,omitempty"`
	CurrentValue string        `json:"currentValue"`
	Options      SelectOptions `json:"options"`
	Meta         Meta          `json:"_meta,omitempty"`
}

// BooleanConfigOption is a `type: "boolean"` option; send it only to clients
// that advertised session.configOptions.boolean.
type BooleanConfigOption struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Category     string `json:"category,omitempty"`
	CurrentValue bool   `json:"currentValue"`
	Meta         Meta   `json:"_meta,omitempty"`
}

func (*SelectConfigOption) isSessionConfigOption()  {}
func (*BooleanConfigOption) isSessionConfigOption() {}

// OptionID implements SessionConfigOption.
func (o *SelectConfigOption) OptionID() string { return o.ID }

// OptionID implements SessionConfigOption.
func (o *BooleanConfigOption) OptionID() string { return o.ID }

// MarshalJSON implements json.Marshaler, emitting `"type":"select"`.
func (o SelectConfigOption) MarshalJSON() ([]byte, error) { return marshalVariant("type", "select", o) }

// MarshalJSON implements json.Marshaler, emitting `"type":"boolean"`.
func (o BooleanConfigOption) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", "boolean", o)
}

// SelectOptions are the values of a select option: either a flat list
// (Options) or a grouped one (Groups); when Groups is non-nil it wins.
type SelectOptions struct {
	Options []SelectOption
	Groups  []SelectGroup
}

// SelectOption is one value of a select option.
type SelectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SelectGroup is a named group of values.
type SelectGroup struct {
	Group   string         `json:"group"`
	Name    string         `json:"name"`
	Options []SelectOption `json:"options"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (s SelectOptions) MarshalJSON() ([]byte, error) {
	if s.Groups != nil {
		return json.Marshal(s.Groups)
	}
	if s.Options == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(s.Options)
}

// UnmarshalJSON implements json.Unmarshaler; the first element's `group` key
// decides the shape.
func (s *SelectOptions) UnmarshalJSON(b []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return err
	}
	*s = SelectOptions{}
	if len(raws) > 0 {
		grouped := false
		_ = jsontext.ScanObject(raws[0], func(k, _ []byte) bool {
			grouped = grouped || jsontext.KeyIs(k, "group")
			return true
		})
		if grouped {
			return json.Unmarshal(b, &s.Groups)
		}
	}
	return json.Unmarshal(b, &s.Options)
}

// UnmarshalSessionConfigOption decodes an option by its `type` tag.
func UnmarshalSessionConfigOption(b []byte) (SessionConfigOption, error) {
	return configOptions.decode(b)
}

var configOptions = taggedUnion[SessionConfigOption]{name: "config option", key: "type",
	variants: map[string]func() SessionConfigOption{
		"select":  func() SessionConfigOption { return new(SelectConfigOption) },
		"boolean": func() SessionConfigOption { return new(BooleanConfigOption) },
	}}

// configOptionsMember is a configOptions list: options of unknown type or
// bad shape are dropped (acp-v1 §4, §16.1: clients ignore unknown types).
var configOptionsMember = listMember("configOptions", UnmarshalSessionConfigOption)

// ConfigValue is the value sent by session/set_config_option: SelectValue
// (no `type` key) or BoolValue (`"type":"boolean"`).
type ConfigValue interface {
	isConfigValue()
}

// SelectValue sets a select option to one of its value ids.
type SelectValue string

// BoolValue sets a boolean option.
type BoolValue bool

func (SelectValue) isConfigValue() {}
func (BoolValue) isConfigValue()   {}

// SetSessionConfigOptionRequest is the params of session/set_config_option.
type SetSessionConfigOptionRequest struct {
	SessionID SessionID   `json:"sessionId"`
	ConfigID  string      `json:"configId"`
	Value     ConfigValue `json:"value"`
	Meta      Meta        `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler: a BoolValue adds `"type":"boolean"`.
func (r SetSessionConfigOptionRequest) MarshalJSON() ([]byte, error) {
	w := struct {
		SessionID SessionID `json:"sessionId"`
		ConfigID  string    `json:"configId"`
		Type      string    `json:"type,omitempty"`
		Value     any       `json:"value"`
		Meta      Meta      `json:"_meta,omitempty"`
	}{SessionID: r.SessionID, ConfigID: r.ConfigID, Meta: r.Meta}
	switch v := r.Value.(type) {
	case SelectValue:
		w.Value = string(v)
	case BoolValue:
		w.Type, w.Value = "boolean", bool(v)
	default:
		return nil, fmt.Errorf("acp: set_config_option: unsupported value %T", r.Value)
	}
	return json.Marshal(w)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *SetSessionConfigOptionRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID SessionID       `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Type      *string         `json:"type"`
		Value     json.RawMessage `json:"value"`
		Meta      Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = SetSessionConfigOptionRequest{SessionID: w.SessionID, ConfigID: w.ConfigID, Meta: w.Meta}
	if len(w.Value) == 0 || isNull(w.Value) {
		return nil // Validate reports the missing value
	}
	switch {
	case w.Type != nil && *w.Type == "boolean":
		var v bool
		if err := json.Unmarshal(w.Value, &v); err != nil {
			return invalidField("value", "must be a boolean")
		}
		r.Value = BoolValue(v)
	case w.Type != nil:
		return invalidField("type", fmt.Sprintf("unknown value type %q", *w.Type))
	default:
		var v string
		if err := json.Unmarshal(w.Value, &v); err != nil {
			return invalidField("value", "must be a string value id")
		}
		r.Value = SelectValue(v)
	}
	return nil
}

// Validate checks the required fields.
func (r *SetSessionConfigOptionRequest) Validate() error {
	switch {
	case r.ConfigID == "":
		return invalidField("configId", "required")
	case r.Value == nil:
		return invalidField("value", "required")
	}
	return requireSession(r.SessionID)
}

// SetSessionConfigOptionResponse is the result of session/set_config_option:
// the complete option set, with the members of a config_option_update.
type SetSessionConfigOptionResponse ConfigOptionUpdate

// MarshalJSON implements json.Marshaler; nil ConfigOptions is sent as [].
func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	r.ConfigOptions = emptyIfNil(r.ConfigOptions)
	return marshalFields(r)
}

// UnmarshalJSON implements json.Unmarshaler; bad options are dropped, by
// the decoder of a config_option_update.
func (r *SetSessionConfigOptionResponse) UnmarshalJSON(b []byte) error {
	return (*ConfigOptionUpdate)(r).UnmarshalJSON(b)
}
