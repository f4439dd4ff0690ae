// Command agents runs dshd's ACP conformance suite against the third-party
// agents pinned in package.json next to this file (codex-acp,
// claude-agent-acp, gemini-cli and the TypeScript SDK's example agent) and
// against dshd, each model-backed agent pointed at the fake model server
// (package fakemodel) on loopback, and prints one row per agent: how many
// checklist items and cases passed, failed, gave advice and were skipped.
// `make conformance-agents` installs the agents (npm ci here) and runs it;
// it is not part of `make test`, the agents weigh about 400 MB.
//
//	go run ./conformance/agents -dshd bin/dshd -out .conformance-agents
//
// Each agent gets a fresh HOME (and CODEX_HOME) in a temporary directory,
// with only what points it at the fake server, so nothing of the user's
// own configuration or credentials is read. The full table and the
// details of every failure and advice go to OUT/NAME.txt.
package main
