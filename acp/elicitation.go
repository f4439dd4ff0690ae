// elicitation.go: elicitation/create and elicitation/complete (acp-v1 §19).

package acp

import (
	"encoding/json"
	"fmt"
)

// CreateElicitationRequest is the params of elicitation/create. Mode selects
// the fields: "form" needs RequestedSchema, "url" needs ElicitationID and URL.
// Exactly one scope is set: SessionID (with an optional ToolCallID) or
// RequestID.
type CreateElicitationRequest struct {
	Mode            string             `json:"mode"`
	Message         string             `json:"message"`
	SessionID       SessionID          `json:"sessionId,omitempty"`
	ToolCallID      ToolCallID         `json:"toolCallId,omitempty"`
	RequestID       RequestID          `json:"requestId,omitzero"`
	RequestedSchema *ElicitationSchema `json:"requestedSchema,omitempty"`
	ElicitationID   string             `json:"elicitationId,omitempty"`
	URL             string             `json:"url,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// Validate checks the required fields of the mode and the single scope.
func (r *CreateElicitationRequest) Validate() error {
	switch {
	case r.Mode == "":
		return invalidField("mode", "required")
	case r.Message == "":
		return invalidField("message", "required")
	case (r.SessionID == "") == r.RequestID.IsZero():
		return invalidField("sessionId", "exactly one of sessionId and requestId is required")
	case r.Mode == ElicitationModeForm && r.RequestedSchema == nil:
		return invalidField("requestedSchema", "required in form mode")
	case r.Mode == ElicitationModeURL && (r.ElicitationID == "" || r.URL == ""):
		return invalidField("url", "elicitationId and url are required in url mode")
	}
	return nil
}

// ElicitationSchema is the flat object schema of a form.
type ElicitationSchema struct {
	Type        string                               `json:"type"`
	Title       string                               `json:"title,omitempty"`
	Description string                               `json:"description,omitempty"`
	Properties  map[string]ElicitationPropertySchema `json:"properties"`
	Required    []string                             `json:"required,omitempty"`
	Meta        Meta                                 `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler; Type defaults to "object".
func (s ElicitationSchema) MarshalJSON() ([]byte, error) {
	if s.Type == "" {
		s.Type = "object"
	}
	if s.Properties == nil {
		s.Properties = map[string]ElicitationPropertySchema{}
	}
	return marshalFields(s)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *ElicitationSchema) UnmarshalJSON(b []byte) error {
	type alias ElicitationSchema
	var w struct {
		alias
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = ElicitationSchema(w.alias)
	if w.Properties != nil {
		s.Properties = make(map[string]ElicitationPropertySchema, len(w.Properties))
		for k, raw := range w.Properties {
			p, err := UnmarshalElicitationPropertySchema(raw)
			if err != nil {
				return fmt.Errorf("property %q: %w", k, err)
			}
			s.Properties[k] = p
		}
	}
	return nil
}

// ElicitationPropertySchema is one form field, tagged by `type`:
// *StringPropertySchema, *NumberPropertySchema (also "integer"),
// *BooleanPropertySchema, *MultiSelectPropertySchema, or
// *UnknownPropertySchema for tags this package does not know (kept verbatim).
type ElicitationPropertySchema interface {
	// PropertyType returns the `type` tag.
	PropertyType() string
	isElicitationPropertySchema()
}

// StringPropertySchema is a `string` field.
type StringPropertySchema struct {
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MinLength   *uint32      `json:"minLength,omitempty"`
	MaxLength   *uint32      `json:"maxLength,omitempty"`
	Pattern     string       `json:"pattern,omitempty"`
	Format      string       `json:"format,omitempty"`
	Default     *string      `json:"default,omitempty"`
	Enum        []string     `json:"enum,omitempty"`
	OneOf       []EnumOption `json:"oneOf,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// EnumOption is a titled choice.
type EnumOption struct {
	Const       string `json:"const"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// NumberPropertySchema is a `number` field, or an `integer` one when Integer
// is set.
type NumberPropertySchema struct {
	Integer     bool     `json:"-"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	Default     *float64 `json:"default,omitempty"`
	Meta        Meta     `json:"_meta,omitempty"`
}

// BooleanPropertySchema is a `boolean` field.
type BooleanPropertySchema struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Default     *bool  `json:"default,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// MultiSelectPropertySchema is an `array` (multi-select) field.
type MultiSelectPropertySchema struct {
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	MinItems    *uint64          `json:"minItems,omitempty"`
	MaxItems    *uint64          `json:"maxItems,omitempty"`
	Items       MultiSelectItems `json:"items"`
	Default     []string         `json:"default,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// MultiSelectItems are the choices of a multi-select: plain strings
// (`{"type":"string","enum":[…]}`) when AnyOf is nil, titled ones
// (`{"anyOf":[…]}`) otherwise.
type MultiSelectItems struct {
	Enum  []string
	AnyOf []EnumOption
	Meta  Meta
}

// MarshalJSON implements json.Marshaler.
func (m MultiSelectItems) MarshalJSON() ([]byte, error) {
	if m.AnyOf != nil {
		return json.Marshal(struct {
			AnyOf []EnumOption `json:"anyOf"`
			Meta  Meta         `json:"_meta,omitempty"`
		}{m.AnyOf, m.Meta})
	}
	return json.Marshal(struct {
		Type string   `json:"type"`
		Enum []string `json:"enum"`
		Meta Meta     `json:"_meta,omitempty"`
	}{"string", emptyIfNil(m.Enum), m.Meta})
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *MultiSelectItems) UnmarshalJSON(b []byte) error {
	var w struct {
		Enum  []string     `json:"enum"`
		AnyOf []EnumOption `json:"anyOf"`
		Meta  Meta         `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = MultiSelectItems{Enum: w.Enum, AnyOf: w.AnyOf, Meta: w.Meta}
	return nil
}

// UnknownPropertySchema is a field whose `type` this package does not know;
// Raw is the whole object, written back unchanged.
type UnknownPropertySchema struct {
	Type string
	Raw  json.RawMessage
}

func (*StringPropertySchema) isElicitationPropertySchema()      {}
func (*NumberPropertySchema) isElicitationPropertySchema()      {}
func (*BooleanPropertySchema) isElicitationPropertySchema()     {}
func (*MultiSelectPropertySchema) isElicitationPropertySchema() {}
func (*UnknownPropertySchema) isElicitationPropertySchema()     {}

// PropertyType implements ElicitationPropertySchema.
func (*StringPropertySchema) PropertyType() string { return "string" }

// PropertyType implements ElicitationPropertySchema.
func (*BooleanPropertySchema) PropertyType() string { return "boolean" }

// PropertyType implements ElicitationPropertySchema.
func (*MultiSelectPropertySchema) PropertyType() string { return "array" }

// PropertyType implements ElicitationPropertySchema.
func (p *UnknownPropertySchema) PropertyType() string { return p.Type }

// PropertyType returns "integer" or "number".
func (p *NumberPropertySchema) PropertyType() string {
	if p.Integer {
		return "integer"
	}
	return "number"
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (p StringPropertySchema) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", "string", p)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (p NumberPropertySchema) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", p.PropertyType(), p)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (p BooleanPropertySchema) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", "boolean", p)
}

// MarshalJSON implements json.Marshaler, emitting the `type` tag.
func (p MultiSelectPropertySchema) MarshalJSON() ([]byte, error) {
	return marshalVariant("type", "array", p)
}

// MarshalJSON implements json.Marshaler: Raw, or just the tag.
func (p UnknownPropertySchema) MarshalJSON() ([]byte, error) {
	return marshalUnknown("type", p.Type, p.Raw)
}

// UnmarshalElicitationPropertySchema decodes a form field by its `type` tag.
func UnmarshalElicitationPropertySchema(b []byte) (ElicitationPropertySchema, error) {
	return propertySchemas.decode(b)
}

var propertySchemas = taggedUnion[ElicitationPropertySchema]{name: "property schema", key: "type",
	variants: map[string]func() ElicitationPropertySchema{
		"string":  func() ElicitationPropertySchema { return new(StringPropertySchema) },
		"number":  func() ElicitationPropertySchema { return new(NumberPropertySchema) },
		"integer": func() ElicitationPropertySchema { return &NumberPropertySchema{Integer: true} },
		"boolean": func() ElicitationPropertySchema { return new(BooleanPropertySchema) },
		"array":   func() ElicitationPropertySchema { return new(MultiSelectPropertySchema) },
	},
	unknown: func(tag string, raw json.RawMessage) ElicitationPropertySchema {
		return &UnknownPropertySchema{Type: tag, Raw: raw}
	}}

// CreateElicitationResponse is the result of elicitation/create. Action is
// accept, decline or cancel; Content is only meaningful with accept.
type CreateElicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is the params of elicitation/complete.
type CompleteElicitationNotification struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (n *CompleteElicitationNotification) Validate() error {
	return require("elicitationId", n.ElicitationID)
}
