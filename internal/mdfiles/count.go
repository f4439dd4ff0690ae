// This file bounds how many files a few directories together have
// listed, and says which directory held more.

package mdfiles

import "strconv"

// Count is the most files of a kind listed from the directories that
// share it, with the words that name the kind and those directories, and
// the setting that sets it, in the error of a directory holding more.
type Count struct {
	// Max is the most files listed from all the directories; more than 0.
	Max int
	// What names one file of the kind: "command file" ("s" makes more).
	What string
	// Where names the directories that share Max: "a workspace's
	// .dshd/commands and .claude/commands together".
	Where string
	// Setting names the setting Max comes from ("--max-command-files"),
	// so that whoever reads the error knows what to raise; "" says none.
	Setting string
}

// Quota is what is left of a [Count] while its directories are listed,
// one after another.
type Quota struct {
	count Count
	left  int
}

// Quota returns a quota of all of c.
func (c Count) Quota() *Quota { return &Quota{count: c, left: c.Max} }

// List lists dir of the workspace root ("" for the user's) as [List]
// does, within what is left of q, and takes from q what it listed. A
// directory holding more than was left is listed up to it and also
// returned as a [*TooManyError].
func (q *Quota) List(root, dir string) ([]File, *TooManyError, error) {
	files, more, err := List(root, dir, q.left)
	if err != nil {
		return nil, nil, err
	}
	q.left -= len(files)
	if more == 0 {
		return files, nil, nil
	}
	return files, &TooManyError{Dir: dir, Files: len(files) + more, Listed: len(files), Count: q.count}, nil
}

// TooManyError is a directory holding more files than were left of its
// [Count]: the first Listed by name were listed, the others were neither
// stat'ed nor read. It is a comparable value, so a caller can tell
// whether the same was found again. Its message does not name Dir, which
// the caller names.
type TooManyError struct {
	Dir    string
	Files  int // the *.md files Dir holds
	Listed int
	Count  Count
}

func (e *TooManyError) Error() string {
	msg := strconv.Itoa(e.Files) + " " + e.Count.What
	switch {
	case e.Files == 1:
		msg += ", not read" // one file is over only when none was left
	case e.Listed == 0:
		msg += "s, none read"
	default:
		msg += "s, the last " + strconv.Itoa(e.Files-e.Listed) + " by name not read"
	}
	msg += ": at most " + strconv.Itoa(e.Count.Max) + " are read from " + e.Count.Where
	if e.Count.Setting != "" {
		msg += " (" + e.Count.Setting + ")"
	}
	return msg
}
