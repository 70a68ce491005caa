package tools

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// calculator is the calculator tool: arithmetic by a recursive-descent parser, no code runs.
type calculator struct{}

func (calculator) Spec() domain.ToolSpec {
	return domain.ToolSpec{
		Name: NameCalculator,
		Description: "Evaluates an arithmetic expression exactly as written and returns the number. " +
			"Operators: + - * / % (remainder) ^ (power, also **; right-associative, -2^2 = -4), " +
			"unary minus and parentheses. Numbers may have decimals and exponents (1.5e3). " +
			"Functions: sqrt, abs, round, floor, ceil, min(a, b, ...), max(a, b, ...), " +
			"log (base 10; log(x, b) for base b), ln, sin, cos, tan (radians). Constants: pi, e. " +
			"Write multiplication explicitly (2*pi, not 2pi). Results carry about 15 significant digits.",
		Schema: objectSchema(map[string]any{
			"expression": map[string]any{
				"type":        "string",
				"description": "The expression, e.g. \"(2 + 3) * sqrt(16) / 4\".",
				"maxLength":   maxExpressionLen,
			},
		}, "expression"),
	}
}

func (c calculator) Call(_ context.Context, input map[string]any) (string, error) {
	if err := checkInput(c.Spec().Schema, input); err != nil {
		return "", err
	}
	expr := stringField(input, "expression")
	if strings.TrimSpace(expr) == "" {
		return "", fmt.Errorf("%w: input.expression is empty", ErrInvalidInput)
	}
	v, err := evaluate(expr)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return formatNumber(v), nil
}

// formatNumber prints v compactly: at most 15 significant digits, so 0.1+0.2 shows as 0.3;
// plain decimals for everyday magnitudes ("8", "2.5", "1000000") and exponents otherwise
// ("1e+21", "1.5e-7").
func formatNumber(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	switch a := math.Abs(v); {
	case a == 0:
		return "0" // also for -0
	case a >= 1e21 || a < 1e-6:
		s := strconv.FormatFloat(v, 'g', -1, 64) // "1e-07"
		return strings.NewReplacer("e-0", "e-", "e+0", "e+").Replace(s)
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

// apply computes a binary operation and refuses results that are not finite real numbers.
func apply(op string, a, b float64) (float64, error) {
	var v float64
	switch op {
	case "+":
		v = a + b
	case "-":
		v = a - b
	case "*":
		v = a * b
	case "/", "%":
		if b == 0 {
			return 0, fmt.Errorf("%w: division by zero", errCalc)
		}
		if op == "/" {
			v = a / b
		} else {
			v = math.Mod(a, b)
		}
	case "^":
		if a == 0 && b < 0 {
			return 0, fmt.Errorf("%w: division by zero (0 to a negative power)", errCalc)
		}
		v = math.Pow(a, b)
	}
	return finite(v, func() string { return formatNumber(a) + " " + op + " " + formatNumber(b) })
}

// constant returns the value of a named constant.
func constant(name string) (float64, error) {
	switch strings.ToLower(name) {
	case "pi":
		return math.Pi, nil
	case "e":
		return math.E, nil
	}
	return 0, fmt.Errorf("%w: unknown name %q (constants: pi, e)", errCalc, name)
}

// unaryFunction returns the one-argument function of that name; each returns an error for
// arguments outside its domain.
func unaryFunction(name string) (func(float64) (float64, error), bool) {
	plain := func(f func(float64) float64) func(float64) (float64, error) {
		return func(x float64) (float64, error) { return f(x), nil }
	}
	switch name {
	case "sqrt":
		return func(x float64) (float64, error) {
			if x < 0 {
				return 0, fmt.Errorf("%w: sqrt of a negative number", errCalc)
			}
			return math.Sqrt(x), nil
		}, true
	case "ln":
		return func(x float64) (float64, error) {
			if x <= 0 {
				return 0, fmt.Errorf("%w: ln of a number that is not positive", errCalc)
			}
			return math.Log(x), nil
		}, true
	case "abs":
		return plain(math.Abs), true
	case "round":
		return plain(math.Round), true
	case "floor":
		return plain(math.Floor), true
	case "ceil":
		return plain(math.Ceil), true
	case "sin":
		return plain(math.Sin), true
	case "cos":
		return plain(math.Cos), true
	case "tan":
		return plain(math.Tan), true
	}
	return nil, false
}

// function applies a named function to its arguments.
func function(name string, args []float64) (float64, error) {
	lower := strings.ToLower(name)
	var v float64
	switch lower {
	case "min", "max":
		if len(args) == 0 {
			return 0, fmt.Errorf("%w: %s needs at least one argument", errCalc, lower)
		}
		v = args[0]
		for _, a := range args[1:] {
			if lower == "min" {
				v = math.Min(v, a)
			} else {
				v = math.Max(v, a)
			}
		}
	case "log":
		if len(args) != 1 && len(args) != 2 {
			return 0, fmt.Errorf("%w: log takes 1 or 2 arguments, got %d", errCalc, len(args))
		}
		if args[0] <= 0 {
			return 0, fmt.Errorf("%w: log of a number that is not positive", errCalc)
		}
		if len(args) == 1 {
			v = math.Log10(args[0])
			break
		}
		if b := args[1]; b <= 0 || b == 1 {
			return 0, fmt.Errorf("%w: log base must be positive and not 1", errCalc)
		}
		v = math.Log(args[0]) / math.Log(args[1])
	default:
		f, ok := unaryFunction(lower)
		if !ok {
			return 0, fmt.Errorf("%w: unknown function %q", errCalc, name)
		}
		if len(args) != 1 {
			return 0, fmt.Errorf("%w: %s takes 1 argument, got %d", errCalc, lower, len(args))
		}
		var err error
		if v, err = f(args[0]); err != nil {
			return 0, err
		}
	}
	return finite(v, func() string { return lower + "(…)" })
}

// finite passes v through when it is a finite real number; what describes the operation.
func finite(v float64, what func() string) (float64, error) {
	switch {
	case math.IsInf(v, 0):
		return 0, fmt.Errorf("%w: %s overflows", errCalc, what())
	case math.IsNaN(v):
		return 0, fmt.Errorf("%w: %s is not a real number", errCalc, what())
	}
	return v, nil
}
