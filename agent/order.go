// This file is the ordering rule of one response's tool calls: they run
// side by side, except that a call waits for every earlier call whose
// access conflicts with its own (tools.Access), so a read issued after a
// write of the same file sees the write, and a command sees everything
// the model did before it and precedes everything after it.

package agent

import "github.com/dshd/dshd/tools"

// order returns, for each call, the earlier calls it must wait for. A call
// that failed before it could run (early) waits for nothing and holds up
// nothing. One call needs no order, and its access is not computed.
func (t *turn) order(pcs []*pendingCall) [][]int {
	after := make([][]int, len(pcs))
	if len(pcs) < 2 {
		return after
	}
	env := t.a.opts.Env
	if env == nil {
		env = &tools.Env{}
	}
	access := make([]tools.Access, len(pcs))
	for i, pc := range pcs {
		if pc.early != "" {
			continue
		}
		access[i] = tools.AccessOf(pc.tool, env.Workspace, pc.input)
		for j := range i {
			if pcs[j].early == "" && access[j].Conflicts(access[i]) {
				after[i] = append(after[i], j)
			}
		}
	}
	return after
}

// waitTurn waits until every call in after is done; false when the turn
// was cancelled first.
func (t *turn) waitTurn(after []int, done []chan struct{}) bool {
	for _, j := range after {
		select {
		case <-done[j]:
		case <-t.ctx.Done():
			return false
		}
	}
	return true
}
