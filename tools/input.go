// This file decodes a call's arguments, the same way for every tool that
// declares a params struct.

package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeInput decodes a call's input into T, refusing unknown fields so a
// misnamed argument is reported instead of silently ignored. Empty input
// and null decode as {}. The error is worded for the model; with it comes
// the zero T, not the part decoded before the failure.
func DecodeInput[T any](input json.RawMessage) (T, error) {
	var v T
	in := bytes.TrimSpace(input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		var zero T
		return zero, fmt.Errorf("invalid arguments: %v", err)
	}
	return v, nil
}
