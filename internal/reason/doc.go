// Package reason holds the one rule for the human reason of a peer's
// error, whichever field carries it: an editor's or a child agent's
// JSON-RPC error, a model server's error body. It is a leaf, so that
// the wire package (acp) and the model backend (agent/llm/openai) share
// the rule without either importing the other. It imports only the
// standard library and keeps no state.
package reason
