package webhook

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// RuleSpec is what SelectRules needs to know of a routing rule; the
// server keeps the rest (target task, requires_approval, ...) and maps the
// returned indexes back to its rules.
type RuleSpec struct {
	// Priority orders evaluation: lower numbers first, ties in slice order.
	Priority int
	// Condition decides whether the rule matches; nil matches every event.
	Condition *Condition
	// Continue makes the rule fan out: after it matches, evaluation goes
	// on to later rules. A matching rule without Continue ends evaluation
	// (first match). A webhook in fan-out mode sets Continue on every rule.
	Continue bool
	// Disabled rules are skipped.
	Disabled bool
}

// SelectRules returns the indexes (into rules) of the rules that fire for
// env, in evaluation order. A condition that fails at run time counts as
// not matching; those failures come back joined in err (each wraps a
// CodeConditionEval *Error naming the rule index) for the caller to log,
// alongside whatever did match.
func SelectRules(rules []RuleSpec, env Env) (matched []int, err error) {
	order := make([]int, len(rules))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rules[a].Priority, rules[b].Priority) })
	var errs []error
	for _, i := range order {
		r := rules[i]
		if r.Disabled {
			continue
		}
		ok := true
		if r.Condition != nil {
			var mErr error
			ok, mErr = r.Condition.Match(env)
			if mErr != nil {
				errs = append(errs, fmt.Errorf("rule %d: %w", i, mErr))
				continue
			}
		}
		if !ok {
			continue
		}
		matched = append(matched, i)
		if !r.Continue {
			break
		}
	}
	return matched, errors.Join(errs...)
}
