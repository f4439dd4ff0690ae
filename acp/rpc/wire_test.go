package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/dshd/dshd/acp"
)

func TestToWire(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"acp error keeps code and data", fmt.Errorf("x: %w", acp.ErrResourceNotFound.WithData(map[string]string{"sessionId": "s"})), `{"code":-32002,"message":"Resource not found","data":{"sessionId":"s"}}`},
		{"plain error is internal", errors.New("disk on fire"), `{"code":-32603,"message":"Internal error","data":"internal error"}`},
		{"context cancellation is request cancelled", fmt.Errorf("x: %w", errContextCanceled()), `{"code":-32800,"message":"Request cancelled"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(toWire(tt.err, nil))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}

func errContextCanceled() error { return context.Canceled }
