// This file declares an entry and the binary platforms.

package registry

// Entry is an agent's agent.json. Field order is the registry's.
type Entry struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Website      string       `json:"website,omitempty"`
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	Icon         string       `json:"icon,omitempty"`
	Distribution Distribution `json:"distribution"`
}

// Distribution is how a client gets and runs the agent; dshd ships
// binaries only.
type Distribution struct {
	Binary map[string]Target `json:"binary,omitempty"`
	Npx    *Package          `json:"npx,omitempty"`
	Uvx    *Package          `json:"uvx,omitempty"`
}

// Target is one platform's archive and the command inside it.
type Target struct {
	Archive string `json:"archive"`
	// SHA256 is the archive's checksum, hex; optional in the registry.
	SHA256 string            `json:"sha256,omitempty"`
	Cmd    string            `json:"cmd"`
	Args   []string          `json:"args,omitempty"`
	Env    map[string]string `json:"env,omitempty"`
}

// Package is an npx or uvx distribution.
type Package struct {
	Package string            `json:"package"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Platform is a registry binary target and the Go target that builds it.
type Platform struct {
	// Key is the registry's name, "linux-x86_64".
	Key          string
	GOOS, GOARCH string
}

// Exe is the name of the executable name on this platform.
func (p Platform) Exe(name string) string {
	if p.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// ArchiveExt is the archive format the platform's users expect: zip on
// Windows, gzipped tar elsewhere (both are formats the registry accepts).
func (p Platform) ArchiveExt() string {
	if p.GOOS == "windows" {
		return ".zip"
	}
	return ".tar.gz"
}

// Platforms are every binary target the registry names, in its order.
var Platforms = []Platform{
	{"darwin-aarch64", "darwin", "arm64"},
	{"darwin-x86_64", "darwin", "amd64"},
	{"linux-aarch64", "linux", "arm64"},
	{"linux-x86_64", "linux", "amd64"},
	{"windows-aarch64", "windows", "arm64"},
	{"windows-x86_64", "windows", "amd64"},
}
