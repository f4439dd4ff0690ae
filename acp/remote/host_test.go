package remote

import "testing"

func TestLoopbackHost_NamesOnlyThisMachinesLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.9.9.9": true, "[::1]:8080": true, "::1": true,
		"localhost": true, "LOCALHOST.:80": true, "dshd.localhost:8080": true,
		"evil.example": false, "evil.example:8080": false, "127.0.0.1.evil.example": false,
		"localhost.evil.example:8080": false, "0.0.0.0:8080": false, "10.0.0.7:8080": false,
		"[::]:8080": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
