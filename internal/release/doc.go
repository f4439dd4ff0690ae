// Command release builds dshd's release for the ACP registry (`make
// release`): for each of the registry's six platforms (linux, darwin and
// windows on amd64 and arm64) a static binary (CGO off, -trimpath, the
// version stamped) in an archive (tar.gz, zip on windows) whose bytes
// depend only on the source and the Go version; SHA256SUMS; and the
// registry entry, agent.json with every archive's URL and checksum, beside
// icon.svg, ready to submit to agentclientprotocol/registry as dshd/. It
// also rewrites the repository's entry (registry/dshd/agent.json) to the
// version and its URLs, without checksums, which belong to one build.
//
// With -vet it instead type-checks the whole module, tests included, for
// each platform (`go vet` per target), which `make test` runs so that no
// platform stops building unnoticed.
//
// It imports internal/registry and nothing else of the project.
package main
