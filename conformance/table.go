// This file prints results: one row per checklist item, aggregating the
// cases that cover it, and the details of failed, advice and skipped
// cases.

package conformance

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// ItemResult aggregates the cases covering one checklist item.
type ItemResult struct {
	Item
	// Status is fail if any covering case failed or any case broke the
	// item's rule, advice if a covering case gave advice (a policy check
	// the agent does not follow, a draft feature) and none failed, pass if
	// a covering case passed, skip if every covering case was skipped, and
	// "" when no case covers the item.
	Status                   Status
	Pass, Fail, Advice, Skip int
	// Cases are the IDs of the covering cases.
	Cases []string
}

// Aggregate folds case results into one result per checklist item.
func Aggregate(results []Result) []ItemResult {
	items := Checklist()
	out := make([]ItemResult, len(items))
	idx := map[string]int{}
	for i, it := range items {
		out[i].Item = it
		idx[it.ID] = i
	}
	for _, r := range results {
		verdict := r.Verdict
		if verdict == "" {
			verdict = r.Status
		}
		// A broken rule fails its item, whatever the case was about; the
		// case's other items keep its own verdict.
		broken := map[string]bool{}
		for _, v := range r.Violations {
			broken[v.Item] = true
		}
		for _, id := range r.Items {
			i, ok := idx[id]
			if !ok {
				continue
			}
			ir := &out[i]
			ir.Cases = append(ir.Cases, r.ID)
			st := verdict
			if broken[id] {
				st = Fail
			}
			switch st {
			case Pass:
				ir.Pass++
			case Fail:
				ir.Fail++
			case Advice:
				ir.Advice++
			case Skip:
				ir.Skip++
			}
		}
		for item := range broken {
			if i, ok := idx[item]; ok && !slices.Contains(r.Items, item) {
				out[i].Fail++
				out[i].Cases = append(out[i].Cases, r.ID+"(violation)")
			}
		}
	}
	for i := range out {
		ir := &out[i]
		switch {
		case ir.Fail > 0:
			ir.Status = Fail
		case ir.Advice > 0:
			ir.Status = Advice
		case ir.Pass > 0:
			ir.Status = Pass
		case ir.Skip > 0:
			ir.Status = Skip
		}
	}
	return out
}

// WriteTable prints one row per checklist item (its id, status, how many
// covering cases passed, failed, gave advice and were skipped, and its
// title) and the summary lines.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tSTATUS\tCASES (pass/fail/advice/skip)\tLEVEL\tCHECK")
	counts := map[Status]int{}
	uncovered := 0
	for _, ir := range Aggregate(results) {
		st := string(ir.Status)
		if ir.Status == "" {
			st = "-"
			uncovered++
		}
		counts[ir.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%d/%d/%d/%d\t%s\t%s\n", ir.ID, st, ir.Pass, ir.Fail, ir.Advice, ir.Skip, ir.Level, ir.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	cases := CountCases(results)
	// Advice has a line of its own: tools parse the summary line.
	_, err := fmt.Fprintf(w, "\nitems: %d pass, %d fail, %d skip, %d not covered; cases: %d pass, %d fail, %d skip\nadvice (never a failure): %d items, %d cases\n",
		counts[Pass], counts[Fail], counts[Skip], uncovered, cases[Pass], cases[Fail], cases[Skip], counts[Advice], cases[Advice])
	return err
}

// CountCases counts results by status.
func CountCases(results []Result) map[Status]int {
	out := map[Status]int{}
	for _, r := range results {
		out[r.Status]++
	}
	return out
}

// WriteDetails prints every failed case with its detail, then every case
// that gave advice, and, when skipped is set, every skipped case with its
// reason.
func WriteDetails(w io.Writer, results []Result, skipped bool) error {
	order := []Status{Fail, Advice}
	if skipped {
		order = append(order, Skip)
	}
	for _, st := range order {
		if err := writeDetails(w, results, st); err != nil {
			return err
		}
	}
	return nil
}

func writeDetails(w io.Writer, results []Result, st Status) error {
	for _, r := range results {
		if r.Status != st {
			continue
		}
		detail := strings.TrimRight(r.Detail, "\n")
		if detail != "" {
			detail = "\n  " + strings.ReplaceAll(detail, "\n", "\n  ")
		}
		if _, err := fmt.Fprintf(w, "%s %s [%s] %s%s\n", strings.ToUpper(string(r.Status)), r.ID, strings.Join(r.Items, " "), r.Name, detail); err != nil {
			return err
		}
	}
	return nil
}
