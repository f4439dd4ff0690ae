// Package acp is the Agent Client Protocol (ACP v1) for Go, as data: the
// wire types of every stable method, capability, content block and session
// update (acp-v1.md, schema 1.21.0) plus the stabilized subagent additions
// (acp-subagents.md), method-name constants, error codes, the two
// directions of the protocol as the [Agent] and [Client] interfaces, and
// [DecodeParams] for a method's params.
//
// It imports only the standard library (and its own internal/jsontext).
// The connections that carry these types — the newline-delimited stream,
// the ordered dispatcher and outgoing calls — are package acp/rpc, which
// imports this one; nothing here imports acp/rpc.
//
// # Unions
//
// ContentBlock, SessionUpdate, ToolCallContent, McpServer, AuthMethod,
// RequestPermissionOutcome, SessionConfigOption, ConfigValue,
// EmbeddedResourceResource, ElicitationPropertySchema and StateUpdate are
// sealed interfaces implemented by pointers to their variants. Each variant
// marshals its own discriminator; each union has one decoder that fails with
// the unknown tag's name. The encoders and the decoders of types with union
// or lenient members share one implementation (mirror.go).
//
// Surface choices: the npm 2.4.0 schema is a little newer than 1.21.0; its
// notice/compaction updates and the tool-call "name" field are not modelled
// (acp-v1.md §23.1). Unknown fields are ignored on input.
package acp
