// This file holds the cases that validate a representative exchange
// against the official JSON schema ([Options].Schema), and the check that
// no elicitation reaches a client that did not ask for it.

package conformance

func schemaCases() []*Case {
	return []*Case{
		{
			ID:    "schema/plain-session",
			Name:  "initialize, session setup, a prompt and config changes validate against schema.json, with no key it does not define",
			Items: []string{"acp-v1#16", "acp-v1#40", "acp-v1#76"},
			Run: func(t *T) {
				if t.Schema() == nil {
					t.Skipf("no schema given (Options.Schema; dshd conformance --schema)")
				}
				c, sid := t.Open(nil, nil)
				t.Prompt(c, sid, "hello")
				t.Barrier(c)
			},
		},
		{
			ID:    "schema/tools-and-subagents",
			Name:  "tool calls, permission requests, plans and subagent messages validate (subagent messages against schema.unstable.json)",
			Items: []string{"acp-v1#40", "acp-v1#76", "subagents#8"},
			Dshd:  true,
			Run: func(t *T) {
				if t.Schema() == nil {
					t.Skipf("no schema given (Options.Schema; dshd conformance --schema)")
				}
				c, sid := t.Open(asking(PermissionAnswer("allow_once")), optIn)
				for _, p := range []string{"conf-write", "conf-plan", "conf-both", "conf-spawn-write", "conf-think"} {
					t.EndTurn(c, sid, p)
				}
			},
		},
		{
			ID:    "elicitation/never-unadvertised",
			Name:  "a client without elicitation capabilities never gets elicitation/create, even through tools and subagents",
			Items: []string{"acp-v1#71", "acp-v1#19"},
			Dshd:  true,
			Run: func(t *T) {
				c, sid := t.Open(asking(PermissionAnswer("allow_once")), nil)
				for _, p := range []string{"conf-write", "conf-run", "conf-spawn-write"} {
					t.EndTurn(c, sid, p)
				}
				if rs := requests(c, "elicitation/create"); len(rs) > 0 {
					t.Errorf("elicitation/create without the capability: %s", clip(rs[0].Raw, 200))
				}
			},
		},
	}
}
