package webhook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Limits on routing conditions. Cost is bounded three ways: by size at
// compile time (length, AST nodes), by construction (no ranges, no
// variables, no predicate inside a predicate, no builtins that multiply
// their input, so work is at most nodes x the bounded env collections), and
// at run time by expr's memory budget plus a wall-clock timeout.
const (
	MaxConditionLength    = 1024
	MaxConditionNodes     = 256
	ConditionTimeout      = 100 * time.Millisecond
	conditionMemoryBudget = 10_000
)

// disabledBuiltins can turn a small expression into a huge string or
// a long loop: repeat and replace multiply their input, reduce carries an
// accumulator that can double each step, the JSON/base64 codecs copy the
// whole payload per call.
var disabledBuiltins = []string{"repeat", "replace", "reduce", "toJSON", "fromJSON", "toBase64", "fromBase64"}

// Condition is a compiled, validated routing condition. It is safe for
// concurrent use.
type Condition struct {
	src     string
	program *vm.Program
}

// CompileCondition validates src as a boolean expression over Env (see
// Env for the variables) and compiles it. Errors are CodeInvalidCondition
// with a message that points at the problem, fit for a 422.
//
// Examples:
//
//	alert.severity == "critical" && alert.labels.service == "api"
//	event == "incident.triggered" && payload.event.data.urgency == "high"
//	any(alerts, .status == "firing" && .labels.namespace startsWith "prod")
//	headers["x-github-event"] == "workflow_run" && payload.workflow_run?.conclusion == "failure"
func CompileCondition(src string) (*Condition, error) {
	if strings.TrimSpace(src) == "" {
		return nil, newError(CodeInvalidCondition, "condition is empty")
	}
	if len(src) > MaxConditionLength {
		return nil, newError(CodeInvalidCondition, "condition is longer than "+strconv.Itoa(MaxConditionLength)+" characters")
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return nil, conditionError(err)
	}
	if err := checkCost(tree.Node); err != nil {
		return nil, err
	}
	opts := []expr.Option{expr.Env(Env{}), expr.AsBool(), expr.MaxNodes(MaxConditionNodes)}
	for _, b := range disabledBuiltins {
		opts = append(opts, expr.DisableBuiltin(b))
	}
	program, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, conditionError(err)
	}
	return &Condition{src: src, program: program}, nil
}

func conditionError(err error) error {
	return wrapError(CodeInvalidCondition, "condition: "+truncate(err.Error(), 400), err)
}

// String returns the source the condition was compiled from.
func (c *Condition) String() string { return c.src }

// Match evaluates the condition. A condition that fails at run time (a
// field of the wrong type in this payload, the budget or the timeout
// exceeded) returns false with a CodeConditionEval error: the caller should
// treat the rule as not matching and log the error.
func (c *Condition) Match(env Env) (bool, error) {
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("panic: %v", r)}
			}
		}()
		machine := vm.VM{MemoryBudget: conditionMemoryBudget}
		v, err := machine.Run(c.program, env)
		done <- result{v, err}
	}()
	timer := time.NewTimer(ConditionTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return false, wrapError(CodeConditionEval, "condition "+strconv.Quote(truncate(c.src, 80))+": "+truncate(r.err.Error(), 300), r.err)
		}
		b, ok := r.v.(bool)
		if !ok {
			return false, newError(CodeConditionEval, fmt.Sprintf("condition %q returned %T, not a boolean", truncate(c.src, 80), r.v))
		}
		return b, nil
	case <-timer.C:
		// The goroutine cannot be stopped; the static limits make sure it
		// finishes soon anyway, and its result is dropped into the buffer.
		return false, newError(CodeConditionEval, "condition "+strconv.Quote(truncate(c.src, 80))+" exceeded "+ConditionTimeout.String())
	}
}

// checkCost rejects constructs whose run time or memory does not grow
// linearly with the (bounded) input.
func checkCost(root ast.Node) error {
	v := &costVisitor{}
	ast.Walk(&root, v)
	return v.err
}

type costVisitor struct{ err error }

func (v *costVisitor) Visit(node *ast.Node) {
	if v.err != nil {
		return
	}
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		if n.Operator == ".." {
			v.err = newError(CodeInvalidCondition, "condition: ranges (a..b) are not allowed; compare with >= and <= instead")
		}
	case *ast.BuiltinNode:
		// Checked here as well as disabled at compile time: expr does not
		// honour DisableBuiltin for predicate builtins such as reduce.
		if slices.Contains(disabledBuiltins, n.Name) {
			v.err = newError(CodeInvalidCondition, "condition: builtin "+n.Name+" is not allowed")
		}
	case *ast.VariableDeclaratorNode:
		v.err = newError(CodeInvalidCondition, "condition: variables (let) are not allowed")
	case *ast.PredicateNode:
		inner := &nestedPredicate{}
		ast.Walk(&n.Node, inner)
		if inner.found {
			v.err = newError(CodeInvalidCondition, "condition: a predicate (all, any, filter, map, ...) inside another predicate is not allowed")
		}
	}
}

type nestedPredicate struct{ found bool }

func (p *nestedPredicate) Visit(node *ast.Node) {
	if _, ok := (*node).(*ast.PredicateNode); ok {
		p.found = true
	}
}
