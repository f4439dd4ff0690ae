// This file derives the tool's description and input schema from the
// bound provider's context contract.

package subagent

import (
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/tools"
)

var (
	//go:embed description_fresh.md
	descriptionFresh string
	//go:embed description_inherit.md
	descriptionInherit string
	//go:embed prompt_fresh.md
	promptFresh string
	//go:embed prompt_inherit.md
	promptInherit string
)

// wording is what the model is told about a binding's tool.
type wording struct {
	description string
	schema      json.RawMessage
}

// wordingFor returns the tool's wording for a provider whose children do
// (inherit) or do not see the parent's conversation.
func wordingFor(inherit bool) wording {
	desc, prompt := descriptionFresh, promptFresh
	if inherit {
		desc, prompt = descriptionInherit, promptInherit
	}
	// The prompt's description depends on the provider's context contract.
	schema := tools.SchemaFor[input](func(s *jsonschema.Schema) {
		s.Properties["prompt"].Description = strings.TrimSpace(prompt)
	})
	return wording{description: strings.TrimSpace(desc), schema: schema}
}

// describe is a tool's description: the binding's head (what the agent is
// for), then the wording derived from the provider's context contract.
func describe(head string, inherit bool) string {
	w := wordings()[boolIndex(inherit)].description
	if head = strings.TrimSpace(head); head == "" {
		return w
	}
	return head + "\n\n" + w
}
