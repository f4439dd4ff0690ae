// Package fakemodel is one loopback HTTP server that speaks the model
// APIs third-party ACP agents use, each well enough to stream one fixed
// answer: OpenAI Responses and Chat Completions (codex-acp), Anthropic
// Messages (claude-agent-acp) and the Gemini API (gemini-cli). It lets
// `make conformance-agents` run those agents offline.
//
//	srv, _ := fakemodel.Start(logger)
//	defer srv.Close()
//	// codex:  base_url = srv.URL() + "/v1", wire_api = "responses"
//	// claude: ANTHROPIC_BASE_URL = srv.URL()
//	// gemini: GOOGLE_GEMINI_BASE_URL = srv.URL()
//	srv.Counts() // requests served per API
//
// Every answer is [Answer], streamed in a few pieces when the request
// asks for a stream, as one JSON body otherwise; token counts are small
// constants. Requests for paths it does not know get 404 and are logged
// once per path, so a new endpoint an agent starts to need shows up.
package fakemodel
