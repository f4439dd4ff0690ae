// This file encodes a journal record's line and writes it to the file. A
// large record (a 50 MB prompt, the output of a big tool call) is written
// as it is encoded, so that appending it costs no copy of it in memory.

package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/crc32"
	"time"
	"unicode/utf8"

	"github.com/dshd/dshd/agent/llm"
)

const (
	// largeData is the size from which a message's text or an encoded
	// update is written from where it lies instead of through the record's
	// buffer; it is also the most a record writes with one write.
	largeData = 64 << 10
	// textPiece is how much of a large text is encoded at a time.
	textPiece = 256 << 10
)

// lineWriter puts one record's line together. With a journal it writes the
// line at the journal's end: a record up to largeData with one write, a
// larger one in consecutive writes as it is encoded. Without one it keeps
// the whole line in buf, for a record the journal holds instead of writing.
// A failed write is kept in err and ends the writing; the journal then cuts
// off what the record wrote.
type lineWriter struct {
	j     *Journal // nil: keep the line in buf
	buf   []byte
	off   int64  // where the next write goes
	sum   uint32 // the journal's checksum with the bytes written
	wrote bool   // some of the line is in the file
	err   error
}

// write adds p to the line.
func (w *lineWriter) write(p []byte) {
	if w.err != nil {
		return
	}
	if w.j != nil && len(w.buf)+len(p) > largeData {
		w.flush()
		if len(p) > largeData {
			w.writeOut(p)
			return
		}
	}
	w.buf = append(w.buf, p...)
}

// spill writes out buf once it holds more than a single write takes.
func (w *lineWriter) spill() {
	if w.j != nil && len(w.buf) > largeData {
		w.flush()
	}
}

// flush writes out what buf holds.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.writeOut(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *lineWriter) writeOut(p []byte) {
	if w.err != nil {
		return
	}
	if w.err = w.j.ensureOpen(); w.err != nil {
		return
	}
	n, err := w.j.f.WriteAt(p, w.off)
	w.wrote = w.wrote || n > 0
	if err != nil {
		w.err = err
		return
	}
	w.sum = crc32.Update(w.sum, crc32.IEEETable, p)
	w.off += int64(n)
}

// encodeRecord encodes the record {"k":kind,"t":now,"d":data} and its
// newline into w; kind is already JSON. It fails only for data that does
// not encode, which a value found to be large never is.
func encodeRecord(w *lineWriter, kind []byte, now time.Time, data any) error {
	w.buf = append(w.buf, `{"k":`...)
	w.buf = append(w.buf, kind...)
	if !now.IsZero() {
		w.buf = append(w.buf, `,"t":"`...)
		w.buf, _ = now.AppendText(w.buf) // UTC times of years 0–9999 always format
		w.buf = append(w.buf, '"')
	}
	w.buf = append(w.buf, `,"d":`...)
	if err := encodeData(w, data); err != nil {
		return err
	}
	w.write(recordEnd)
	return nil
}

var recordEnd, openList, comma, closeList = []byte("}\n"), []byte("["), []byte(","), []byte("]")

// encodeData encodes data as json.Marshal does, except that already encoded
// JSON is only compacted (HTML characters in it stay as sent). The large
// records a session writes — a message with a large text, a conversation
// holding one, a large encoded update — are written from where they lie;
// any other value is encoded into the line's buffer.
func encodeData(w *lineWriter, data any) error {
	switch d := data.(type) {
	case json.RawMessage:
		if len(d) >= largeData && json.Valid(d) && isCompact(d) {
			w.write(d)
			return nil
		}
	case llm.Message:
		if len(d.Content) >= largeData {
			return encodeMessage(w, d)
		}
	case []llm.Message:
		if d != nil && hasLargeText(d) {
			w.write(openList)
			for i, m := range d {
				if i > 0 {
					w.write(comma)
				}
				if err := encodeData(w, m); err != nil {
					return err
				}
			}
			w.write(closeList)
			return nil
		}
	}
	var err error
	w.buf, err = appendData(w.buf, data)
	w.spill()
	return err
}

// appendData appends data's JSON to b, encoded straight into the record;
// already encoded JSON (an update from the connection's encoder) is only
// compacted. The bytes are json.Marshal's, but for HTML characters in raw
// JSON, which stay as sent.
func appendData(b []byte, data any) ([]byte, error) {
	raw, isRaw := data.(json.RawMessage)
	if isRaw && len(raw) > 0 && json.Valid(raw) && isCompact(raw) {
		// An update from the connection's encoder is compact already:
		// Compact would copy it unchanged, through a buffer of its own.
		return append(b, raw...), nil
	}
	w := bytes.NewBuffer(b)
	if isRaw && len(raw) > 0 {
		err := json.Compact(w, raw)
		return w.Bytes(), err
	}
	if err := json.NewEncoder(w).Encode(data); err != nil {
		return b, err
	}
	w.Truncate(w.Len() - 1) // Encode ends with a newline
	return w.Bytes(), nil
}

func hasLargeText(msgs []llm.Message) bool {
	for _, m := range msgs {
		if len(m.Content) >= largeData {
			return true
		}
	}
	return false
}

// contentMark stands for a large text while the rest of its message is
// encoded. The first `,"content":"\u0000"` of the encoding is where the
// text goes: only the role comes before it, and a string's encoding holds
// no quote that is not escaped.
const (
	contentMark = "\x00"
	contentKey  = `,"content":"`
	markJSON    = `\u0000`
)

var contentAt = []byte(contentKey + markJSON + `"`)

// encodeMessage encodes m, whose text is large: the message without its
// text, with the text encoded into it piece by piece.
func encodeMessage(w *lineWriter, m llm.Message) error {
	text := m.Content
	m.Content = contentMark
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	i := bytes.Index(b, contentAt)
	if i < 0 {
		return errors.New("session: a message encodes without its content")
	}
	open := i + len(contentKey)
	w.write(b[:open])
	encodeText(w, text)
	w.write(b[open+len(markJSON):])
	return nil
}

// encodeText writes the inside of s's JSON string, as json.Marshal encodes
// it, a piece at a time.
func encodeText(w *lineWriter, s string) {
	var piece bytes.Buffer
	enc := json.NewEncoder(&piece)
	for len(s) > 0 {
		n := len(s)
		if n > textPiece {
			n = pieceEnd(s, textPiece)
		}
		piece.Reset()
		_ = enc.Encode(s[:n]) // a string always encodes
		b := piece.Bytes()
		w.write(b[1 : len(b)-2]) // without its quotes and Encode's newline
		s = s[n:]
	}
}

// pieceEnd returns where a piece of s cut near n ends so that it encodes as
// it does within s: at the start of a rune at most three bytes before n,
// else (in a run of continuation bytes, which no rune spans) at n. The
// encoder reads a rune, or an invalid byte, from its first byte on, so no
// byte before the cut is read differently.
func pieceEnd(s string, n int) int {
	for k := n; k > n-utf8.UTFMax; k-- {
		if utf8.RuneStart(s[k]) {
			return k
		}
	}
	return n
}

// isCompact reports whether the valid JSON b has no white space outside
// its strings, so that compacting it changes nothing.
func isCompact(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return true
}
