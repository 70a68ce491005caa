package tools

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func calc(t testing.TB, expr string) (string, error) {
	t.Helper()
	return calculator{}.Call(context.Background(), map[string]any{"expression": expr})
}

func TestCalculator(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"2+2*3", "8"},
		{"10/4", "2.5"},
		{"(2+2)*3", "12"},
		{"  7 - 10 ", "-3"},
		{"2^10", "1024"},
		{"2**10", "1024"},
		{"2^3^2", "512"}, // right-associative: 2^(3^2)
		{"-2^2", "-4"},   // power binds tighter than unary minus
		{"(-2)^2", "4"},
		{"2^-1", "0.5"},
		{"--3", "3"},
		{"+-+3", "-3"},
		{"7 % 3", "1"},
		{"-7 % 3", "-1"},
		{"5.5 % 2", "1.5"},
		{"1e3", "1000"},
		{"1.5E-3 * 2", "0.003"},
		{"2.5e+2", "250"},
		{".5 + 1.", "1.5"},
		{"1000*1000", "1000000"},
		{"0.1+0.2", "0.3"},
		{"1/3", "0.333333333333333"},
		{"1e21", "1e+21"},
		{"1e-7", "1e-7"},
		{"0.000001", "0.000001"},
		{"-0", "0"},
		{"sqrt(16)", "4"},
		{"sqrt(2)", "1.4142135623731"},
		{"abs(-3.5)", "3.5"},
		{"round(2.5)", "3"},
		{"round(-2.5)", "-3"},
		{"floor(-1.5)", "-2"},
		{"ceil(1.2)", "2"},
		{"min(3, 1, 2)", "1"},
		{"max(3, 1, 2)", "3"},
		{"max(-1)", "-1"},
		{"log(1000)", "3"},
		{"log(8, 2)", "3"},
		{"ln(e)", "1"},
		{"ln(1)", "0"},
		{"sin(0)", "0"},
		{"cos(pi)", "-1"},
		{"tan(pi/4)", "1"},
		{"pi", "3.14159265358979"},
		{"PI * 2", "6.28318530717959"},
		{"e", "2.71828182845905"},
		{"SQRT(9)", "3"},
		{"(((((1+1)))))", "2"},
		{"2 * (3 + 4) - 5 / (1 + 1)", "11.5"},
		{"max(1, 2) ^ min(3, 4)", "8"},
		{"sqrt(3^2 + 4^2)", "5"},
		{"1e308 * 0.5", "5e+307"},
		{"\t1\n+\r\n2", "3"},
	} {
		got, err := calc(t, tc.expr)
		if err != nil {
			t.Errorf("%q: unexpected error %v", tc.expr, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestCalculatorErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"1/0", "division by zero"},
		{"5 % 0", "division by zero"},
		{"1/(2-2)", "division by zero"},
		{"0^-1", "division by zero"},
		{"x + 1", `unknown name "x"`},
		{"foo(1)", `unknown function "foo"`},
		{"sqrt(-1)", "sqrt of a negative number"},
		{"ln(0)", "not positive"},
		{"log(-1)", "not positive"},
		{"log(8, 1)", "log base"},
		{"log()", "log takes 1 or 2 arguments"},
		{"sqrt(1, 2)", "sqrt takes 1 argument, got 2"},
		{"sqrt()", "sqrt takes 1 argument, got 0"},
		{"min()", "min needs at least one argument"},
		{"(-8)^(1/3)", "is not a real number"},
		{"1e308 * 10", "overflows"},
		{"10^400", "overflows"},
		{"1e400", "out of range"},
		{"2pi", `unexpected "pi" at position 2`},
		{"2 3", `unexpected "3" at position 3`},
		{"1 +", "unexpected end of expression"},
		{"(1 + 2", `missing ")"`},
		{"sqrt(4", `missing ")"`},
		{"1 + 2)", `unexpected ")" at position 6`},
		{"()", `unexpected ")"`},
		{"1 + * 2", `unexpected "*"`},
		{"1,2", `unexpected ","`},
		{"2 & 3", `unexpected character "&" at position 3`},
		{"2 × 3", `unexpected character "×" at position 3`},
		{".", "malformed number"},
		{"1..2", `unexpected ".2" at position 3`},
		{"__import__('os')", `unexpected character "'"`},
		{"", "input.expression is empty"},
		{"   ", "input.expression is empty"},
		{strings.Repeat("1+", 500) + "1", "longer than 1000 characters"},
		{strings.Repeat("(", 101) + "1" + strings.Repeat(")", 101), "deeper than 100 levels"},
		{strings.Repeat("-", 101) + "1", "deeper than 100 levels"},
		{strings.Repeat("sqrt(", 101) + "1" + strings.Repeat(")", 101), "deeper than 100 levels"},
		{"2" + strings.Repeat("^2", 101), "deeper than 100 levels"},
	} {
		got, err := calc(t, tc.expr)
		if err == nil {
			t.Errorf("%.40q = %q, want error containing %q", tc.expr, got, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: error %q does not contain %q", tc.expr, err, tc.want)
		}
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%.40q: error %v is not ErrInvalidInput", tc.expr, err)
		}
	}
}

func TestCalculatorLimitsAreInclusive(t *testing.T) {
	for _, tc := range []struct{ name, expr, want string }{
		{"100 groups", strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), "1"},
		{"100 signs", strings.Repeat("-", 100) + "1", "1"},
		{"100 calls", strings.Repeat("abs(", 100) + "1" + strings.Repeat(")", 100), "1"},
		{"1000 characters", strings.Repeat("1+", 499) + "1 ", "500"},
	} {
		got, err := calc(t, tc.expr)
		if err != nil || got != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestCalculatorInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"missing", map[string]any{}, "input.expression is required"},
		{"nil input", nil, "input.expression is required"},
		{"number", map[string]any{"expression": 4.0}, "input.expression must be a string, not a number"},
		{"extra property", map[string]any{"expression": "1", "x": 1.0}, `unknown property "x"`},
	} {
		_, err := calculator{}.Call(context.Background(), tc.input)
		if err == nil || !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrInvalidInput containing %q", tc.name, err, tc.want)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{8, "8"}, {2.5, "2.5"}, {-0.25, "-0.25"}, {1e20, "100000000000000000000"}, {1e21, "1e+21"},
		{123456789012345678, "123456789012346000"}, {1.5e-7, "1.5e-7"}, {math.Copysign(0, -1), "0"},
	} {
		if got := formatNumber(tc.in); got != tc.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzCalculator checks that no input panics and that every result is a finite number the
// formatter can read back.
func FuzzCalculator(f *testing.F) {
	for _, s := range []string{
		"2+2*3", "10/4", "-2^2", "2**3**2", "sqrt(16)+min(1,2,3)", "log(8,2)", "1e3", ".5", "1.",
		"(((1)))", "1/0", "2e", "2e+", "pi*e", "max()", "", ")", "(", "1e400", "\xff", "--1",
		strings.Repeat("(", 120) + "1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		got, err := calc(t, expr)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("%q: error %v is not ErrInvalidInput", expr, err)
			}
			if !utf8.ValidString(err.Error()) && utf8.ValidString(expr) {
				t.Fatalf("%q: error message is not valid UTF-8: %q", expr, err)
			}
			return
		}
		v, perr := strconv.ParseFloat(got, 64)
		if perr != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("%q = %q, not a finite number", expr, got)
		}
	})
}
