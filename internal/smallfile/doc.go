// Package smallfile reads a small file that someone else controls: the
// files a repository holds and dshd reads itself (slash command files,
// agent definitions and the output schemas they name, AGENTS.md,
// .gitignore and .git/info/exclude). A repository is a peer, and such a
// file must not hurt the daemon: [Read] never blocks on a FIFO or a
// device (the file is opened without blocking and described through the
// opened descriptor, so a file swapped in after a stat is the one
// judged), takes only a regular file, and reads at most a bound. It is the
// one way those files are read.
//
// A workspace's files are read, stat'ed and listed through the workspace
// as an os.Root ([ReadIn], [OpenIn], [Root]): neither a ".." nor a
// symbolic link (even one swapped in during the open) leads outside it,
// and [Root] says so as an [*OutsideError]. [Read] follows a link
// anywhere: it is for the user's own files.
//
// It imports only the standard library and starts no goroutines.
package smallfile
