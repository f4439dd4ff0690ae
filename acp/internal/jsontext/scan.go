// scan.go: an allocation-free scanner over the members of a JSON object, used
// by the stream's envelope check and by the union decoders' tag lookup.

package jsontext

import (
	"encoding/json"
	"errors"
)

var errScan = errors.New("jsontext: malformed JSON object")

// ScanObject calls fn with the raw key (quoted) and raw value of each member
// of the JSON object b, in order, until fn returns false. It checks structure
// only as far as it needs to find the members; callers that need full
// validity check it separately.
func ScanObject(b []byte, fn func(key, val []byte) bool) error {
	return scanItems(b, '{', '}', errScan, func(i int) (int, bool) {
		if i >= len(b) || b[i] != '"' {
			return -1, false
		}
		kend := skipString(b, i)
		if kend < 0 {
			return -1, false
		}
		key := b[i:kend]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return -1, false
		}
		i = skipWS(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return -1, false
		}
		return vend, !fn(key, b[i:vend])
	})
}

// scanItems walks the members of the JSON object or the elements of the
// JSON array b, which opening and closing delimit; notOpen is the failure
// when b does not start with opening. item reads the item at i and returns
// where it ends (-1 when it is malformed) and whether the walk stops there.
func scanItems(b []byte, opening, closing byte, notOpen error, item func(i int) (end int, stop bool)) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != opening {
		return notOpen
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closing {
		return nil
	}
	for {
		end, stop := item(i)
		if end < 0 {
			return errScan
		}
		if stop {
			return nil
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return errScan
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case closing:
			return nil
		default:
			return errScan
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"', or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return -1
				}
				return j
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// KeyIs reports whether the raw quoted key equals name.
func KeyIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	if !hasBackslash(raw) {
		return false
	}
	s, ok := String(raw)
	return ok && s == name
}

// String decodes a raw JSON string value; ok is false for anything else.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if !hasBackslash(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// ScanArray calls fn with the raw bytes of each element of the JSON array
// b, in order, until fn returns false. The elements are subslices of b,
// not copies. Like ScanObject it checks structure only as far as it needs.
func ScanArray(b []byte, fn func(elem []byte) bool) error {
	return scanItems(b, '[', ']', errNotArray, func(i int) (int, bool) {
		end := skipValue(b, i)
		if end < 0 {
			return -1, false
		}
		return end, !fn(b[i:end])
	})
}

var errNotArray = errors.New("jsontext: not a JSON array")
