// Small pieces every screen uses: errors from the envelope, spinners, pagers, dates.
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiError, page, type Page } from './api'

export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message
  return e instanceof Error ? e.message : String(e)
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null
  const fields = error instanceof ApiError ? error.errors : []
  return (
    <div class="error" role="alert">
      {messageOf(error)}
      {fields.length > 0 && (
        <ul>{fields.map((f) => <li key={f.field} data-testid="field-error" data-field={f.field}><code>{f.field}</code>: {f.message}</li>)}</ul>
      )}
    </div>
  )
}

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return <span class="spinner" role="status"><span class="spin" aria-hidden="true" />{label}…</span>
}

export function when(t: string | number | null | undefined): string {
  if (t === null || t === undefined || t === '') return '—'
  const d = typeof t === 'number' ? new Date(t * 1000) : new Date(t)
  return isNaN(d.getTime()) ? String(t) : d.toLocaleString()
}

/** A paged list of path: the page's items, Previous/Next, a spinner while loading, errors. */
export function usePaged<T>(path: string | null, limit = 20, extra = "", reload: unknown = 0) {
  const [offset, setOffset] = useState(0)
  const [data, setData] = useState<Page<T> | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(false)
  useEffect(() => { setOffset(0) }, [path, extra])
  useEffect(() => {
    if (!path) return
    let live = true
    setLoading(true)
    setError(null)
    page<T>(path, limit, offset, extra)
      .then((p) => live && setData(p))
      .catch((e) => live && setError(e))
      .finally(() => live && setLoading(false))
    return () => { live = false }
  }, [path, limit, offset, extra, reload])
  const pager = (
    // A group, not a navigation landmark: a screen has several lists, and landmarks must be unique.
    <div class="pager" role="group" aria-label="Pages">
      <button type="button" disabled={offset === 0 || loading} onClick={() => setOffset(Math.max(0, offset - limit))}>Previous</button>
      <span>{data ? `${offset + 1}–${offset + data.items.length}` : ''}</span>
      <button type="button" disabled={!data?.next || loading} onClick={() => setOffset(offset + limit)}>Next</button>
      {loading && <Spinner />}
    </div>
  )
  return { items: data?.items ?? [], loading, error, pager, offset }
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head"><h2>{title}</h2>{actions}</header>
      {children}
    </section>
  )
}

/**
 * A destructive action asked twice, in the page rather than with window.confirm (which blocks the
 * tab, cannot be styled or labelled, and which automation and some embedders refuse): the first
 * click shows what will happen with a confirm and a cancel button.
 */
export function Confirm({ label, question, onConfirm, testid, name }: { label: string; question: string; onConfirm: () => void; testid?: string; name?: string }) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return <button type="button" class="danger" data-testid={testid} aria-label={name} onClick={() => setAsking(true)}>{label}</button>
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>{' '}
      <button type="button" class="danger" data-testid={testid ? testid + '-confirm' : undefined} autoFocus onClick={() => { setAsking(false); onConfirm() }}>Yes, {label.toLowerCase()}</button>{' '}
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  )
}
