package tools

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits of the calculator, so that a model cannot make it work without bound.
const (
	maxExpressionLen = 1000
	maxNesting       = 100
)

// errCalc marks errors in an expression; calculator.Call reports them as invalid input.
var errCalc = errors.New("cannot evaluate")

// evaluate parses and computes an arithmetic expression. The grammar, loosest first:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ ("^" | "**") unary ]       right-associative; -2^2 is -(2^2)
//	primary = number | name | name "(" expr { "," expr } ")" | "(" expr ")"
//
// Every intermediate result must be a finite real number.
func evaluate(expression string) (float64, error) {
	if len(expression) > maxExpressionLen {
		return 0, fmt.Errorf("%w: expression is longer than %d characters", errCalc, maxExpressionLen)
	}
	p := &parser{src: expression}
	p.next()
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.tok.kind != tokEOF {
		return 0, p.unexpected()
	}
	return v, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokName
	tokOp // one of + - * / % ^ ( ) , and ** as "^"
)

type token struct {
	kind tokKind
	text string
	num  float64
	pos  int // byte offset, for messages
}

type parser struct {
	src   string
	pos   int
	tok   token
	err   error // a lexing error, reported when the parser reaches the bad token
	depth int
}

// next advances to the following token.
func (p *parser) next() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case isDigit(c) || c == '.':
		p.number(start)
	case isLetter(c):
		for p.pos < len(p.src) && (isLetter(p.src[p.pos]) || isDigit(p.src[p.pos])) {
			p.pos++
		}
		p.tok = token{kind: tokName, text: p.src[start:p.pos], pos: start}
	case c == '*' && strings.HasPrefix(p.src[p.pos:], "**"):
		p.pos += 2
		p.tok = token{kind: tokOp, text: "^", pos: start}
	case strings.IndexByte("+-*/%^(),", c) >= 0:
		p.pos++
		p.tok = token{kind: tokOp, text: string(c), pos: start}
	default:
		p.pos++
		p.tok = token{kind: tokOp, text: string(c), pos: start}
		p.err = fmt.Errorf("%w: unexpected character %q at position %d", errCalc, p.char(start), start+1)
	}
}

// number scans digits, an optional fraction and an optional exponent such as 1.5e-3.
func (p *parser) number(start int) {
	digits := func() int {
		n := 0
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
			n++
		}
		return n
	}
	n := digits()
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		n += digits()
	}
	if n == 0 {
		p.tok = token{kind: tokOp, text: ".", pos: start}
		p.err = fmt.Errorf("%w: malformed number at position %d", errCalc, start+1)
		return
	}
	// An exponent only when digits follow, so that "2e" stays a number and a name.
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		q := p.pos + 1
		if q < len(p.src) && (p.src[q] == '+' || p.src[q] == '-') {
			q++
		}
		if q < len(p.src) && isDigit(p.src[q]) {
			p.pos = q
			digits()
		}
	}
	text := p.src[start:p.pos]
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.tok = token{kind: tokNum, text: text, pos: start}
		p.err = fmt.Errorf("%w: number %s is out of range", errCalc, text)
		return
	}
	p.tok = token{kind: tokNum, text: text, num: v, pos: start}
}

// char returns the (possibly multi-byte) character at byte offset i.
func (p *parser) char(i int) string {
	for _, r := range p.src[i:] {
		return string(r)
	}
	return ""
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

// unexpected reports the current token as out of place.
func (p *parser) unexpected() error {
	if p.err != nil {
		return p.err
	}
	switch p.tok.kind {
	case tokEOF:
		return fmt.Errorf("%w: unexpected end of expression", errCalc)
	case tokName:
		return fmt.Errorf("%w: unexpected %q at position %d (write * for multiplication)", errCalc, p.tok.text, p.tok.pos+1)
	}
	return fmt.Errorf("%w: unexpected %q at position %d", errCalc, p.tok.text, p.tok.pos+1)
}

func (p *parser) isOp(ops ...string) bool {
	if p.tok.kind != tokOp || p.err != nil {
		return false
	}
	for _, op := range ops {
		if p.tok.text == op {
			return true
		}
	}
	return false
}

func (p *parser) expr() (float64, error) {
	v, err := p.term()
	for err == nil && p.isOp("+", "-") {
		op := p.tok.text
		p.next()
		var w float64
		if w, err = p.term(); err == nil {
			v, err = apply(op, v, w)
		}
	}
	return v, err
}

func (p *parser) term() (float64, error) {
	v, err := p.unary()
	for err == nil && p.isOp("*", "/", "%") {
		op := p.tok.text
		p.next()
		var w float64
		if w, err = p.unary(); err == nil {
			v, err = apply(op, v, w)
		}
	}
	return v, err
}

// unary is where every kind of nesting passes (groups, calls, signs, powers), so it is
// where the depth is bounded.
func (p *parser) unary() (float64, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting+1 {
		return 0, fmt.Errorf("%w: expression nests deeper than %d levels", errCalc, maxNesting)
	}
	if p.isOp("-", "+") {
		op := p.tok.text
		p.next()
		v, err := p.unary()
		if op == "-" {
			v = -v
		}
		return v, err
	}
	return p.power()
}

func (p *parser) power() (float64, error) {
	base, err := p.primary()
	if err != nil || !p.isOp("^") {
		return base, err
	}
	p.next()
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	return apply("^", base, exp)
}

func (p *parser) primary() (float64, error) {
	switch {
	case p.tok.kind == tokNum && p.err == nil:
		v := p.tok.num
		p.next()
		return v, nil
	case p.tok.kind == tokName:
		name := p.tok.text
		p.next()
		if p.isOp("(") {
			return p.call(name)
		}
		return constant(name)
	case p.isOp("("):
		p.next()
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if !p.isOp(")") {
			return 0, p.missing(")")
		}
		p.next()
		return v, nil
	}
	return 0, p.unexpected()
}

// call parses the arguments of a function after its name and applies it.
func (p *parser) call(name string) (float64, error) {
	p.next() // "("
	var args []float64
	if !p.isOp(")") {
		for {
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			args = append(args, v)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	if !p.isOp(")") {
		return 0, p.missing(")")
	}
	p.next()
	return function(name, args)
}

func (p *parser) missing(what string) error {
	if p.err != nil || p.tok.kind != tokEOF {
		return p.unexpected()
	}
	return fmt.Errorf("%w: missing %q at end of expression", errCalc, what)
}
