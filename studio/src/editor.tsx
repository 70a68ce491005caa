// A code editor for a JSON or YAML text: CodeMirror (codeeditor.ts, its own chunk) fetched the
// first time an editor comes into view, so that the first screen's script stays small. Until it has
// arrived (or if it cannot be fetched) the text is a plain textarea with the same name and value.
import { useEffect, useRef, useState } from 'preact/hooks'
import type { FieldMark, Format, Handle, Mark } from './codeeditor'

type Module = typeof import('./codeeditor')
let loading: Promise<Module> | null = null

export interface CodeEditorProps {
  id: string
  testid: string
  label: string
  value: string
  format: Format
  onChange: (text: string) => void
  /** The API's errors at dotted fields of the text, shown at their lines. */
  fields?: FieldMark[]
  /** The id of what describes the text (a live check). */
  describedBy?: string
}

export function CodeEditor(p: CodeEditorProps) {
  const [mod, setMod] = useState<Module | null>(null)
  const [failed, setFailed] = useState(false)
  const [mounted, setMounted] = useState(false)
  const [marks, setMarks] = useState<Mark[]>([])
  const host = useRef<HTMLDivElement>(null)
  const handle = useRef<Handle | null>(null)
  const props = useRef(p)
  props.current = p
  const labelId = p.id + '-label'

  // The chunk is fetched when the editor comes near the screen (it sits below the agent's form),
  // or is focused: an agent's page is usable before 350 KB of editor are parsed, and the
  // textarea meanwhile takes what is typed.
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const load = () => {
      loading ??= import('./codeeditor')
      loading.then(setMod, () => { loading = null; setFailed(true) })
    }
    const el = box.current
    if (loading || !el || typeof IntersectionObserver === 'undefined') { load(); return }
    const seen = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) { seen.disconnect(); load() } }, { rootMargin: '200px' })
    seen.observe(el)
    el.addEventListener('focusin', load, { once: true })
    return () => { seen.disconnect(); el.removeEventListener('focusin', load) }
  }, [])

  useEffect(() => {
    if (!mod || !host.current) return
    let live = true
    const cur = props.current
    void mod.mount(host.current, {
      value: cur.value, format: cur.format, testid: cur.testid, id: cur.id, label: cur.label,
      onChange: (t) => props.current.onChange(t),
      onMarks: (m) => live && setMarks((was) => (JSON.stringify(was) === JSON.stringify(m) ? was : m)),
    }).then((h) => {
      if (!live) { h.destroy(); return }
      // The textarea goes: what was typed in it meanwhile, and its focus, pass to the editor.
      const area = document.querySelector<HTMLTextAreaElement>('textarea#' + CSS.escape(cur.id))
      handle.current = h
      const now = props.current
      h.update(now.value, now.format, now.fields ?? [], now.label)
      if (area && document.activeElement === area) h.focusAt(area.selectionStart)
      setMounted(true)
    }, () => live && setFailed(true))
    return () => { live = false; handle.current?.destroy(); handle.current = null; setMounted(false) }
  }, [mod])

  useEffect(() => { handle.current?.update(p.value, p.format, p.fields ?? [], p.label) }, [p.value, p.format, p.fields, p.label])

  return (
    <div class="code-editor" ref={box}>
      <label id={labelId} for={mounted ? undefined : p.id} onClick={() => handle.current?.focusAt()}>{p.label}</label>
      {mod && !failed && <div ref={host} class="code-host" />}
      {!mounted && <textarea id={p.id} data-testid={p.testid} class="code" rows={16} spellcheck={false} data-format={p.format}
        value={p.value} onInput={(e) => p.onChange(e.currentTarget.value)} aria-describedby={p.describedBy} />}
      {failed && <p class="hint">The code editor could not be loaded: this is a plain text box.</p>}
      {marks.length > 0 && (
        <ul class="editor-marks" data-testid="editor-errors" aria-label="Errors by line">
          {marks.map((m, i) => (
            <li key={i} data-testid="editor-error" data-line={m.line} data-field={m.field}>
              <button type="button" class="linklike" onClick={() => handle.current?.focusAt(m.from)}>Line {m.line}</button>: {m.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
