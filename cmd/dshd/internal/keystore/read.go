// This file reads a key from the user.

package keystore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"
)

// ReadKey reads a key from in. When in is a terminal it puts it in raw
// mode, writes prompt to out and reads one line without echo, so the key
// never shows on the screen or in the terminal's scrollback; Ctrl-C or
// Ctrl-D give up, and the terminal is put back as it was whatever
// happens. Otherwise it reads the first line of in (a pipe, a file) and
// writes no prompt. Surrounding spaces are dropped.
func ReadKey(in io.Reader, out io.Writer, prompt string) (string, error) {
	if f, ok := in.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		return readHidden(int(f.Fd()), in, out, prompt)
	}
	line, err := bufio.NewReaderSize(in, MaxKeyLen+2).ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("the first line of the input is longer than %d bytes; a key has at most %d", MaxKeyLen, MaxKeyLen)
	case err != nil && !errors.Is(err, io.EOF):
		return "", err
	}
	return strings.TrimSpace(string(line)), nil
}

// errGaveUp is Ctrl-C or Ctrl-D at the prompt.
var errGaveUp = errors.New("no key given")

// readHidden reads the key in raw mode, in which the terminal echoes
// nothing and sends Ctrl-C as a byte rather than a signal: echo is off
// before the prompt shows, and no signal can leave the terminal without
// echo.
func readHidden(fd int, in io.Reader, out io.Writer, prompt string) (string, error) {
	state, err := term.MakeRaw(fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(fd, state)
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")
	line, err := t.ReadPassword(prompt)
	if errors.Is(err, io.EOF) {
		// Enter ends its line on the screen; giving up does not.
		fmt.Fprint(out, "\r\n")
		return "", errGaveUp
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
