// This file resolves the settings: flag, then environment, then config
// file, then default, each value parsed and checked by its row.

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DefaultPath returns the default config file path.
func DefaultPath(lookupEnv func(string) (string, bool)) string {
	dir, _ := lookupEnv("XDG_CONFIG_HOME")
	if dir == "" {
		home, _ := lookupEnv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "dshd", "config.json")
}

// Load resolves the settings of the command whose flags are flags (those
// it declared with [AddFlags]); settings of other commands are not read.
// Every value is parsed and checked, and every key of the config file must
// be a setting's; the first mistake is returned as an [*Error]. lookupEnv
// is os.LookupEnv in production.
func Load(flags *pflag.FlagSet, lookupEnv func(string) (string, bool)) (*Settings, error) {
	st := &Settings{origins: map[string]origin{}}
	f, top, err := readConfig(flags, lookupEnv)
	if err != nil {
		return nil, err
	}
	inFile := map[string]member{}
	if f != nil {
		if err := unique(f, top, ""); err != nil {
			return nil, err
		}
		known := fileKeys()
		for _, m := range top {
			if !slices.Contains(known, m.key) {
				return nil, unknownKey(f, m, "", known)
			}
			inFile[m.key] = m
		}
	}
	for _, s := range table {
		fl := flags.Lookup(s.flag)
		if fl == nil {
			continue // a setting of another command
		}
		if err := st.resolve(s, fl, f, inFile, lookupEnv); err != nil {
			return nil, err
		}
	}
	if m, ok := inFile["agents"]; ok {
		if err := st.loadAgents(f, m); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// fileKeys are the keys the config file may have.
func fileKeys() []string {
	keys := []string{"agents"}
	for _, s := range table {
		keys = append(keys, s.file)
	}
	return keys
}

// readConfig reads the config file named by --config, else DSHD_CONFIG,
// else the default path, which alone may be missing.
func readConfig(flags *pflag.FlagSet, lookupEnv func(string) (string, bool)) (*file, []member, error) {
	path, _ := flags.GetString("config")
	o := fromFlag("config", path)
	optional := false
	if path == "" {
		if p, ok := lookupEnv("DSHD_CONFIG"); ok && p != "" {
			path, o = p, fromEnv("DSHD_CONFIG", p)
		} else {
			path, optional = DefaultPath(lookupEnv), true
			o = origin{where: path}
		}
	}
	if path == "" {
		return nil, nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, nil, o.errorf("%s", err)
	}
	return parseFile(path, data)
}

// resolve sets one setting from its first source, parsed and checked.
func (st *Settings) resolve(s setting, fl *pflag.Flag, f *file, inFile map[string]member, lookupEnv func(string) (string, bool)) error {
	kindOfItem := s.kind
	if s.kind == kList {
		kindOfItem = kString
	}
	var vals []any
	var origins []origin
	fromText := func(o origin, text string) error {
		v, err := parse(kindOfItem, text)
		if err != nil {
			return o.errorf("%s", err)
		}
		vals, origins = append(vals, v), append(origins, o)
		return nil
	}
	env := EnvName(s.flag)
	envText, envSet := lookupEnv(env)
	if envText == "" && s.kind != kString {
		envSet = false // an empty variable sets no number, switch or list
	}
	m, fileSet := inFile[s.file]
	switch {
	case fl.Changed:
		for _, text := range fl.Value.(*rawValue).vals {
			if err := fromText(fromFlag(s.flag, text), text); err != nil {
				return err
			}
		}
	case envSet:
		texts := []string{envText}
		if s.kind == kList {
			texts = strings.Split(envText, ";")
		}
		for _, text := range texts {
			if err := fromText(fromEnv(env, text), text); err != nil {
				return err
			}
		}
	case fileSet && s.kind == kList:
		if len(m.raw) == 0 || m.raw[0] != '[' {
			return fromFile(f, m.valOff, s.file, m.raw).errorf("want a list of strings")
		}
		for i, it := range f.elements(m.raw, m.valOff) {
			o := fromFile(f, it.valOff, fmt.Sprintf("%s[%d]", s.file, i), it.raw)
			v, err := decode(kString, it.raw)
			if err != nil {
				return o.errorf("%s", err)
			}
			vals, origins = append(vals, v), append(origins, o)
		}
	case fileSet:
		o := fromFile(f, m.valOff, s.file, m.raw)
		v, err := decode(s.kind, m.raw)
		if err != nil {
			return o.errorf("%s", err)
		}
		vals, origins = append(vals, v), append(origins, o)
	case s.def != "" && s.kind != kList:
		// Defaults are not checked here: a test holds every row's default
		// to its own check.
		v, err := parse(s.kind, s.def)
		if err != nil {
			return fmt.Errorf("config: the default of --%s: %w", s.flag, err)
		}
		st.set(s, v)
		st.origins[s.flag] = origin{where: "--" + s.flag + " (default)", value: fmt.Sprintf("%q", s.def)}
		return nil
	default:
		return nil
	}
	check := s.check
	if check == nil {
		check = defaultCheck(kindOfItem)
	}
	for i, v := range vals {
		if check != nil {
			if err := check(v); err != nil {
				return origins[i].errorf("%s", err)
			}
		}
		st.set(s, v)
		if s.kind == kList {
			st.origins[fmt.Sprintf("%s[%d]", s.flag, i)] = origins[i]
		}
	}
	o := origin{explicit: true}
	if len(origins) > 0 {
		o = origins[0]
	}
	st.origins[s.flag] = o
	return nil
}

// set stores v in the field of s; a list gains one item per call.
func (st *Settings) set(s setting, v any) {
	switch p := s.ptr(st).(type) {
	case *string:
		*p = v.(string)
	case *int:
		*p = v.(int)
	case *bool:
		*p = v.(bool)
	case *time.Duration:
		*p = v.(time.Duration)
	case *[]string:
		*p = append(*p, v.(string))
	default:
		panic(fmt.Sprintf("config: setting %s points at a %T", s.flag, p))
	}
}

// loadAgents reads the file's named agents, checking each key and type;
// what the values mean is the acp provider's to check.
func (st *Settings) loadAgents(f *file, m member) error {
	ms, err := f.object(m, "agents")
	if err != nil {
		return err
	}
	fields := agentFields()
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	st.Agents = make(map[string]Agent, len(ms))
	for _, am := range ms {
		name := "agents." + am.key
		entries, err := f.object(am, name)
		if err != nil {
			return err
		}
		var a Agent
		rv := reflect.ValueOf(&a).Elem()
		for _, e := range entries {
			i, ok := fields[e.key]
			if !ok {
				return unknownKey(f, e, name, known)
			}
			fv := rv.Field(i)
			o := fromFile(f, e.valOff, name+"."+e.key, e.raw)
			if err := json.Unmarshal(e.raw, fv.Addr().Interface()); err != nil {
				return o.errorf("want %s", describe(fv.Type()))
			}
			if fv.Kind() == reflect.Int && fv.Int() < 0 {
				return o.errorf("want 0 or more")
			}
		}
		st.Agents[am.key] = a
		st.origins[name] = fromFile(f, am.keyOff, name, nil)
	}
	return nil
}

// agentFields maps the file keys of [Agent] to its field indexes.
func agentFields() map[string]int {
	t := reflect.TypeFor[Agent]()
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[key] = i
	}
	return out
}

// describe names a field type in a message.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of strings"
	case reflect.Map:
		return "an object of strings"
	}
	return t.String()
}
