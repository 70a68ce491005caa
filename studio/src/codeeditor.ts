// The code editor's heavy half, a chunk of its own loaded when an editor is first shown (editor.tsx):
// CodeMirror 6 with JSON or YAML highlighting, line numbers, and the errors of the text at their
// lines — its parse error, and the API's field errors (dotted paths) found in the text's tree.
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands'
import { json } from '@codemirror/lang-json'
import { bracketMatching, ensureSyntaxTree, indentOnInput, syntaxHighlighting, type LanguageSupport } from '@codemirror/language'
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint'
import { Compartment, EditorState, Transaction, type Extension } from '@codemirror/state'
import { EditorView, keymap, lineNumbers } from '@codemirror/view'
import { classHighlighter } from '@lezer/highlight'
import type { SyntaxNode } from '@lezer/common'

export type Format = 'json' | 'yaml'

/** An error of the text: where it is (a line from 1), and why. */
export interface Mark { line: number; col: number; from: number; message: string; field?: string }

/** An error the API found at a dotted field of the configuration. */
export interface FieldMark { field: string; message: string }

export interface Options {
  value: string
  format: Format
  testid: string
  id: string
  label: string
  onChange: (text: string) => void
  onMarks: (marks: Mark[]) => void
}

/** What the page holds of a mounted editor. */
export interface Handle {
  update(value: string, format: Format, fields: FieldMark[], label: string): void
  /** Puts the cursor at from (the start of an error), or leaves it where it is, and focuses the text. */
  focusAt(from?: number): void
  destroy(): void
}

/**
 * The editor's element: its `value` reads and replaces the whole text, as a textarea's does, so
 * that whatever sets a form control's value (an autofill, the browser tests' fill) sets it too.
 * CodeMirror lives in its shadow root: there it styles itself with constructed style sheets, which
 * the page's Content-Security-Policy (style-src 'self', no inline style) allows, where in the
 * document it would add <style> elements that the policy blocks. Custom properties (the theme's
 * colours) and the text's font and colour are inherited through the shadow root.
 */
class CodeEditorElement extends HTMLElement {
  view?: EditorView
  get value(): string { return this.view ? this.view.state.doc.toString() : '' }
  set value(text: string) {
    const v = this.view
    if (v && text !== v.state.doc.toString()) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } })
  }
}
if (!customElements.get('code-editor')) customElements.define('code-editor', CodeEditorElement)

// Colours are style.css's custom properties, so the editor follows the light and dark themes.
const theme = EditorView.theme({
  '&': { background: 'var(--card)', color: 'var(--fg)', border: '1px solid var(--line)', borderRadius: '6px', fontSize: '13px' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace', lineHeight: '1.4', overflow: 'auto' },
  '.cm-content': { caretColor: 'var(--fg)', minHeight: '12rem' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
  '.cm-gutters': { background: 'var(--code-bg)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-lintRange-error': { backgroundImage: 'none', textDecoration: 'underline wavy var(--bad)', textDecorationSkipInk: 'none' },
  '.cm-lintPoint-error:after': { borderBottomColor: 'var(--bad)' },
  '.cm-tooltip': { background: 'var(--card)', color: 'var(--fg)', border: '1px solid var(--line)' },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--bad)' },
  '.cm-matchingBracket': { background: 'var(--tint)', outline: '1px solid var(--line)' },
  '.cm-nonmatchingBracket': { color: 'var(--bad)' },
  '.tok-propertyName': { color: 'var(--syn-key)' },
  '.tok-string': { color: 'var(--syn-string)' },
  '.tok-number': { color: 'var(--syn-number)' },
  '.tok-bool, .tok-literal, .tok-keyword': { color: 'var(--syn-keyword)' },
  '.tok-punctuation, .tok-meta, .tok-comment': { color: 'var(--muted)' },
})

let yamlLang: Promise<LanguageSupport> | null = null
let yamlLib: Promise<typeof import('yaml')> | null = null

/** The language of a format; YAML's grammar is fetched the first time it is asked for. */
async function language(f: Format): Promise<Extension> {
  if (f === 'json') return json()
  yamlLang ??= import('@codemirror/lang-yaml').then((m) => m.yaml())
  return yamlLang
}

/** Mounts an editor in host. */
export async function mount(host: HTMLElement, o: Options): Promise<Handle> {
  const lang = new Compartment(), name = new Compartment()
  let label = o.label
  const el = document.createElement('code-editor') as CodeEditorElement
  el.id = o.id
  el.dataset.testid = o.testid
  el.dataset.format = o.format
  const shadow = el.attachShadow({ mode: 'open' })
  let format = o.format
  let fields: FieldMark[] = []
  let seq = 0
  // given: the last text the page gave. Its update may come a frame after a keystroke, still with
  // the text of before it: only a text the page has changed replaces the doc.
  let given = o.value
  const view = new EditorView({
    parent: shadow,
    root: shadow,
    state: EditorState.create({
      doc: o.value,
      extensions: [
        lineNumbers(), history(), indentOnInput(), bracketMatching(), lintGutter(),
        syntaxHighlighting(classHighlighter), theme, EditorView.lineWrapping,
        // Tab is not taken: it moves the focus on, as everywhere else in the page.
        keymap.of([...defaultKeymap, ...historyKeymap]),
        lang.of(await language(o.format)),
        // Named by its label's text: an id reference cannot cross the shadow root.
        name.of(EditorView.contentAttributes.of({ 'aria-label': o.label })),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return
          if (!u.transactions.every((t) => t.annotation(Transaction.remote))) o.onChange(u.state.doc.toString())
          later()
        }),
      ],
    }),
  })
  el.view = view
  host.replaceChildren(el)

  // The marks of the current text: its parse error, else the fields the API named.
  async function mark() {
    const n = ++seq
    const text = view.state.doc.toString()
    const ds = format === 'json' ? jsonMarks(view.state, text, fields) : await yamlMarks(text, fields)
    if (n !== seq) return // a later text is being marked
    view.dispatch(setDiagnostics(view.state, ds))
    o.onMarks(ds.map((d) => {
      const line = view.state.doc.lineAt(d.from)
      return { line: line.number, col: d.from - line.from + 1, from: d.from, message: d.message, field: (d as Diagnostic & { field?: string }).field }
    }))
  }
  // Marked a moment after a change, never inside it: the marks go to the page's state, and the
  // page's next render may update the editor, which would mark again.
  let timer: number | undefined
  function later() {
    clearTimeout(timer)
    timer = window.setTimeout(() => void mark(), 30)
  }
  later()

  return {
    async update(value, f, fs, l) {
      fields = fs
      if (l !== label) {
        label = l
        view.dispatch({ effects: name.reconfigure(EditorView.contentAttributes.of({ 'aria-label': l })) })
      }
      // The text first, at once: a keystroke while a grammar loads must not be undone by it.
      const changed = f !== format
      format = f
      const fresh = value !== given
      given = value
      if (fresh && value !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value }, annotations: Transaction.remote.of(true) })
      else later()
      if (!changed) return
      const ext = await language(f)
      if (format !== f) return // switched again meanwhile
      view.dispatch({ effects: lang.reconfigure(ext) })
      el.dataset.format = f // the text and its highlighting are both in the format now
    },
    focusAt(from) {
      if (from !== undefined) view.dispatch({ selection: { anchor: Math.min(from, view.state.doc.length) }, scrollIntoView: true })
      view.focus()
    },
    destroy() { clearTimeout(timer); seq++; view.destroy() },
  }
}

type FieldDiagnostic = Diagnostic & { field?: string }

/** The path of a dotted field in the configuration: system_config's own prefix dropped. */
function segments(field: string): string[] {
  const s = field.split('.')
  return s[0] === 'system_config' ? s.slice(1) : s
}

function jsonMarks(state: EditorState, text: string, fields: FieldMark[]): FieldDiagnostic[] {
  try {
    JSON.parse(text)
  } catch (e) {
    const msg = (e as Error).message
    // V8 names the offset ("… in JSON at position 41 (line 3 column 5)"); the end of the text otherwise.
    const m = /at position (\d+)/.exec(msg)
    const from = m ? Math.min(Number(m[1]), text.length) : text.length
    return [{ from, to: Math.min(from + 1, text.length), severity: 'error', message: msg.replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, '') }]
  }
  const tree = ensureSyntaxTree(state, state.doc.length, 500)
  if (!tree) return []
  return fields.map((f) => {
    let node: SyntaxNode | null = tree.topNode.firstChild
    let at = node
    for (const seg of segments(f.field)) {
      if (!node) break
      const next = child(state, node, seg)
      if (!next) break
      at = next.mark
      node = next.value
    }
    const from = at ? at.from : 0
    return { from, to: at ? Math.min(at.to, state.doc.lineAt(from).to) : 0, severity: 'error', message: `${f.field}: ${f.message}`, field: f.field }
  })
}

/** The member seg of a JSON object or array node: the node to mark (a property's name) and its value. */
function child(state: EditorState, node: SyntaxNode, seg: string): { mark: SyntaxNode; value: SyntaxNode | null } | null {
  if (node.name === 'Object') {
    for (let p = node.firstChild; p; p = p.nextSibling) {
      if (p.name !== 'Property') continue
      const name = p.getChild('PropertyName')
      if (!name) continue
      let key: unknown
      try { key = JSON.parse(state.sliceDoc(name.from, name.to)) } catch { continue }
      if (key === seg) return { mark: name, value: name.nextSibling?.nextSibling ?? null }
    }
  } else if (node.name === 'Array' && /^\d+$/.test(seg)) {
    let i = 0
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.type.isError || ['[', ']', ','].includes(c.name)) continue
      if (i++ === Number(seg)) return { mark: c, value: c }
    }
  }
  return null
}

async function yamlMarks(text: string, fields: FieldMark[]): Promise<FieldDiagnostic[]> {
  yamlLib ??= import('yaml')
  const Y = await yamlLib
  const doc = Y.parseDocument(text)
  if (doc.errors.length) {
    return doc.errors.slice(0, 5).map((e) => {
      const from = Math.min(e.pos[0], text.length)
      return { from, to: Math.min(Math.max(e.pos[1], from + 1), text.length), severity: 'error', message: e.message.split('\n')[0] }
    })
  }
  return fields.map((f) => {
    let node: unknown = doc.contents
    let at: [number, number] | null = rangeOf(node)
    for (const seg of segments(f.field)) {
      let next: { mark: unknown; value: unknown } | null = null
      if (Y.isMap(node)) {
        const pair = node.items.find((p) => (Y.isScalar(p.key) ? String(p.key.value) : String(p.key)) === seg)
        if (pair) next = { mark: pair.key, value: pair.value }
      } else if (Y.isSeq(node) && /^\d+$/.test(seg)) {
        const item = node.items[Number(seg)]
        if (item !== undefined) next = { mark: item, value: item }
      }
      if (!next) break
      at = rangeOf(next.mark) ?? at
      node = next.value
    }
    const from = at ? Math.min(at[0], text.length) : 0
    const eol = text.indexOf('\n', from)
    return { from, to: Math.min(at ? at[1] : from, eol < 0 ? text.length : eol), severity: 'error', message: `${f.field}: ${f.message}`, field: f.field }
  })
}

function rangeOf(n: unknown): [number, number] | null {
  const r = (n as { range?: [number, number, number] } | null)?.range
  return r ? [r[0], r[1]] : null
}
