// This file derives the tool's description and input schema from the
// bound provider's context contract.

package subagent

import (
	_ "embed"
	"encoding/json"
	"strings"
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

// descriptionParam describes the description parameter.
const descriptionParam = "A short summary of the task in 3-7 words, shown to the user (for example \"Find the config loader\")."

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
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description": map[string]any{"type": "string", "description": descriptionParam},
			"prompt":      map[string]any{"type": "string", "description": strings.TrimSpace(prompt)},
		},
		"required":             []string{"description", "prompt"},
		"additionalProperties": false,
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(err) // a static literal; cannot fail
	}
	return wording{description: strings.TrimSpace(desc), schema: raw}
}
