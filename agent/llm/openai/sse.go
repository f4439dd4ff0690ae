// The server-sent events reader (llm-backends.md §2.1).

package openai

import (
	"bufio"
	"bytes"
	"io"
)

// sseReader splits a text/event-stream body into the data of its events.
// Unlike bufio.Scanner it has no 64 KiB line limit: a whole tool call with
// a file in its arguments can arrive as one line. What it holds is
// bounded all the same: a line, and the data of an event, longer than max
// is [passedEvent].
type sseReader struct {
	r       *bufio.Reader
	max     int
	long    []byte // a line longer than the bufio buffer, assembled
	data    []byte // data of the event being read
	hasData bool
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// readLine returns the next line without its "\n" or "\r\n". The slice is
// valid until the next call. A last line cut off without a line end is
// io.ErrUnexpectedEOF: the stream was torn mid-line.
func (s *sseReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(s.long) > s.max {
				return nil, passedEvent
			}
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) > s.max+2 {
		return nil, passedEvent
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// next returns the data of the next event that has any; comments (keep-
// alives), event/id/retry fields and empty events are skipped. The slice is
// valid until the next call. At the end of the body it returns io.EOF, after
// delivering a last event that lacked its blank line.
func (s *sseReader) next() ([]byte, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.hasData {
				s.hasData = false
				return s.data, nil
			}
			return nil, err
		}
		if len(line) == 0 {
			if s.hasData {
				s.hasData = false
				return s.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(field) != "data" {
			continue
		}
		if s.hasData {
			// An event's lines are each within max, but a server may send
			// them without end and never the blank line that ends it.
			if len(s.data)+1+len(value) > s.max {
				return nil, passedEvent
			}
			s.data = append(s.data, '\n')
		} else {
			s.data = s.data[:0]
			s.hasData = true
		}
		s.data = append(s.data, value...)
	}
}
