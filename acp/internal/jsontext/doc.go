// Package jsontext holds the allocation-free JSON helpers that acp's union
// decoders and acp/rpc's envelope check share: a scanner over an object's
// members, raw-string decoding, integer-literal checks and a string encoder
// that writes exactly what encoding/json writes with HTML escaping off.
//
// It imports only the standard library and owns no goroutines.
package jsontext
