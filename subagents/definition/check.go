// This file holds definitions to what exists: the providers and their
// capabilities, the tools, the backend's models.

package definition

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshd/dshd/internal/suggest"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools/subagent"
)

// Env is what definitions are checked against.
type Env struct {
	// Service holds the providers.
	Service *subagents.Service
	// Tools are the names of the tools that exist besides the
	// definitions' own: built-ins and the daemon's bindings. A definition
	// may not take one of these names; its tool filter may name these and
	// the other definitions.
	Tools []string
	// Models returns the models the backend serves; when it is nil or
	// returns none, a model is used as given.
	Models func() []string
}

// frontKeys maps a binding option onto the front matter key that sets it.
var frontKeys = map[string]string{
	subagent.KeyTools:        keyTools,
	subagent.KeyDenyTools:    keyDisallowedTools,
	subagent.KeyOutputSchema: keyOutputSchema,
	subagent.KeyMaxDepth:     keyMaxDepth,
	subagent.KeyMaxTurns:     keyMaxTurns,
	subagent.KeyMaxTokens:    keyMaxTokens,
	subagent.KeySystemPrompt: keyBody,
	subagent.KeyModel:        keyModel,
	subagent.KeyDescription:  keyDescription,
}

// CheckAll holds defs to env and returns the ones that can work and an
// error for each that cannot, in the order of defs. A definition must
// not take the name of a tool in env; its provider must exist and
// declare every start-time capability the definition needs; its schema
// and system prompt must be valid; its model must be one the backend
// serves; and every tool its filter names must exist (a tool of env or of
// a definition that passed the other checks).
func CheckAll(defs []*Definition, env Env) ([]*Definition, []*Error) {
	var models []string
	if env.Models != nil {
		models = env.Models()
	}
	checked := make([]*Error, len(defs))
	parallel(len(defs), func(i int) { checked[i] = defs[i].check(env, models) })
	var passed []*Definition
	var errs []*Error
	for i, d := range defs {
		if checked[i] != nil {
			errs = append(errs, checked[i])
			continue
		}
		passed = append(passed, d)
	}
	names := slices.Clone(env.Tools)
	for _, d := range passed {
		names = append(names, d.Name())
	}
	ok := passed[:0:0]
	for _, d := range passed {
		if err := subagent.CheckTools(d.Binding, names); err != nil {
			errs = append(errs, d.optionError(err))
			continue
		}
		ok = append(ok, d)
	}
	return ok, errs
}

// check is everything but the tool filter's names.
func (d *Definition) check(env Env, models []string) *Error {
	if slices.Contains(env.Tools, d.Name()) {
		key := keyName
		if _, given := d.lines[keyName]; !given {
			key = ""
		}
		return d.errorAt(key, fmt.Errorf("the name %q is taken by another tool; name the agent differently", d.Name()))
	}
	if err := subagent.Check(d.Binding, env.Service); err != nil {
		return d.optionError(err)
	}
	if err := d.checkAgentArgs(env.Service); err != nil {
		return err
	}
	if m := d.modelGiven; m != "" && len(models) > 0 && !slices.Contains(models, m) {
		return d.errorAt(keyModel, fmt.Errorf("the backend does not serve %q (it serves %s)%s; use model: inherit for the parent's model", m, strings.Join(models, ", "), suggest.DidYouMean(m, models)))
	}
	return nil
}

// optionError turns subagent.Check's error into the definition's, at the
// front matter key (or the line of the system prompt) that caused it.
func (d *Definition) optionError(err error) *Error {
	var oe *subagent.OptionError
	if !errors.As(err, &oe) {
		return &Error{File: d.File, Err: err, scope: d.Scope}
	}
	key, ok := frontKeys[oe.Key]
	if k := providerKey(oe.Err); !ok && k != "" && slices.Contains(acpKeys, k) {
		if _, given := d.lines[k]; given {
			// The acp provider's binding keys are spelled as the
			// front matter's.
			key, ok = k, true
			oe = &subagent.OptionError{Key: oe.Key, Provider: oe.Provider, Err: keyedMessage(oe.Err, k)}
		}
	}
	if !ok {
		// The provider or its options: the key that chose them.
		key = keyProvider
		for _, k := range []string{keyAgent, keyCommand, keyArgs} {
			if _, given := d.lines[k]; given {
				key = k
				break
			}
		}
	}
	e := d.errorAt(key, oe.Err)
	e.Provider, e.Capability = oe.Provider, oe.Capability
	if key == keyProvider && e.Line == 0 {
		// spawn by default: no key to point at.
		e.Key = keyProvider
	}
	var re *prompt.RenderError
	if key == keyBody && errors.As(err, &re) {
		// The position is the file's; the renderer's, in the body, goes.
		e.Line, e.Column = d.bodyLine+re.Line-1, re.Column
		msg := re.Error()
		if _, rest, ok := strings.Cut(msg, "column "); ok {
			if _, rest, ok := strings.Cut(rest, ": "); ok {
				msg = rest
			}
		}
		e.Err = errors.New(msg)
	}
	return e
}
