// Package registry is the ACP agent registry's entry format
// (rfd:acp-agent-registry, and the agentclientprotocol/registry
// repository's agent.schema.json and CONTRIBUTING.md): the Entry type, the
// six binary platforms and the Go targets that build them, and the checks
// the registry's CI makes of an entry and its icon, so that dshd's entry
// (registry/dshd/ in this repository) is known to pass them before it is
// submitted.
//
// The schema in agent.schema.json is this package's transcription of the
// registry's, taken from agentclientprotocol/registry at commit 172d5034;
// Validate adds the rules the registry's CI checks beyond it.
//
// The package imports nothing of the project.
package registry
