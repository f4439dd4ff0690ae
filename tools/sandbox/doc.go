// Package sandbox runs a command confined and tied to dshd's lifetime.
//
// Go cannot run code between fork and exec, so a command is not started
// directly: dshd re-executes itself as a small helper (`dshd sandbox
// POLICY -- ARGV...`, [Main]) that restricts itself and then starts the
// command, which inherits the restrictions. The helper
//
//   - confines the command with Landlock (Linux 5.19+, ABI 2 or later):
//     reads everywhere (or only below the configured roots), writes only
//     below the workspace roots, the additional writable roots, the
//     command's private temp dir and the toolchain caches (in
//     workspace-write mode; only the temp dir in read-only mode), plus a
//     few device files (/dev/null, /dev/pts, /dev/shm, ...). Removing and
//     renaming inside the writable roots is allowed (git checkout works).
//     Processes outside the sandbox cannot be signalled (ABI 6).
//   - drops every capability before it starts the command (in a
//     confining mode): a command of a root dshd is uid 0 without any
//     capability, in a UTS namespace of its own where one can be made.
//   - takes the network away, when asked, by starting in a network
//     namespace of its own with only loopback up; where no namespace can
//     be made, Landlock denies TCP bind and connect instead (ABI 4; UDP
//     and Multipath TCP are then not covered).
//   - keeps every process the command starts: it is the init of a PID
//     namespace of its own, whose processes the kernel kills when the
//     helper dies, and it dies with dshd (the parent-death signal), so
//     nothing a command started outlives dshd, even on SIGKILL. Where no
//     namespace can be made it is a subreaper instead and ends every
//     descendant itself when dshd dies (SIGTERM as the death signal).
//     When the command's main process exits, whatever it left running
//     gets SIGTERM, a grace period, then SIGKILL.
//   - reports how the command ended on a status pipe (fd 3), since an
//     init process cannot die of a signal.
//
// [Sandbox.Command] prepares the helper's exec.Cmd for one command, which
// [Cmd.Start] starts on the caller's streams, or [Cmd.StartChild] on
// pipes, as a [subproc.Child], for a long-lived server or child agent; a nil
// *Sandbox runs commands directly, unconfined. [Sandbox.Describe] words
// the sandbox for the permission question, [Cmd.Explain] turns a refused
// write in the command's output into advice naming the setting that would
// allow it.
//
// When the kernel has no Landlock, the sandbox says so once, loudly, and
// follows the configured [Fallback]: refuse commands, or run them
// unconfined (still under the helper, so they die with dshd).
//
// Goroutines: none in dshd beyond the ones os/exec and subproc start for a
// running command. The helper runs one reaper goroutine.
package sandbox
