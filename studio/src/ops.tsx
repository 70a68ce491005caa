// Operations: webhooks and their deliveries, usage and cost, limits, the audit log. Each
// sub-screen is a chunk of its own, fetched the first time it is opened (/studio/ops/<screen>),
// so the first script does not grow with them. The helpers below are shared by those chunks.
import type { ComponentChildren, FunctionComponent } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, type ApiKey, type Agent, type FieldError } from './api'
import { ROOT } from './router'
import type { components } from './schema'
import { ErrorBox, Spinner } from './ui'

type Schemas = components['schemas']
export type Webhook = Schemas['Webhook']
export type WebhookWithSecret = Schemas['WebhookWithSecret']
export type WebhookDelivery = Schemas['WebhookDelivery']
export type WebhookEvent = Schemas['WebhookEvent']
export type UsageReport = Schemas['UsageReport']
export type UsageRow = Schemas['UsageRow']
export type CompanyLimits = Schemas['CompanyLimits']
export type AuditEntry = Schemas['AuditEntry']
export type AuditAction = Schemas['AuditAction']

/** The sub-screens, in the order of the sub-navigation. */
const SCREENS = [
  ['webhooks', 'Webhooks', () => import('./opshooks').then((m) => m.Webhooks)],
  ['usage', 'Usage and cost', () => import('./opsusage').then((m) => m.Usage)],
  ['limits', 'Limits', () => import('./opslimits').then((m) => m.Limits)],
  ['audit', 'Audit log', () => import('./opsaudit').then((m) => m.Audit)],
] as const

/** What a sub-screen is given: the path segments after its name, and the query. */
export interface OpsProps { rest: string[]; query: URLSearchParams }

const loaded = new Map<string, FunctionComponent<OpsProps>>()

/** The Operations area: its sub-navigation and the sub-screen named by sub (default webhooks). */
export function Ops({ sub, rest, query }: { sub?: string; rest: string[]; query: URLSearchParams }) {
  const at = SCREENS.find(([k]) => k === sub) ?? SCREENS[0]
  const [name] = at
  const [Screen, setScreen] = useState<FunctionComponent<OpsProps> | undefined>(() => loaded.get(name))
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    const have = loaded.get(name)
    if (have) {
      setScreen(() => have)
      return
    }
    let live = true
    setScreen(undefined)
    setError(null)
    at[2]().then((c: FunctionComponent<OpsProps>) => {
      loaded.set(name, c)
      if (live) setScreen(() => c)
    }, (e: unknown) => live && setError(e))
    return () => { live = false }
  }, [name])
  return (
    <div class="stack">
      <nav aria-label="Operations" class="subnav">
        {SCREENS.map(([k, label]) => (
          <a key={k} href={ROOT + 'ops/' + k} data-testid={'ops-' + k} aria-current={k === name ? 'page' : undefined}>{label}</a>
        ))}
      </nav>
      <ErrorBox error={error} />
      {Screen ? <Screen rest={rest} query={query} /> : !error && <Spinner />}
    </div>
  )
}

/**
 * Whether a paged list has answered once: usePaged starts idle (not loading, no items) before its
 * first request, which must not read as an empty list (its guidance would flash, then shift).
 */
export function useAnswered(loading: boolean): boolean {
  const [began, setBegan] = useState(loading)
  useEffect(() => { if (loading) setBegan(true) }, [loading])
  return began && !loading
}

/** The field errors of err (an API 400) at one field or under it (path, or path.*, path[…]). */
export function errorsAt(err: unknown, path: string): FieldError[] {
  if (!(err instanceof ApiError)) return []
  return err.errors.filter((f) => f.field === path || f.field.startsWith(path + '.') || f.field.startsWith(path + '['))
}

/** The id of the field error text of an input, for its aria-describedby. */
export function errID(form: string, path: string): string {
  return `${form}-err-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`
}

/** The aria-describedby of an input: its error text's id while it has errors. */
export function describedBy(err: unknown, form: string, path: string): string | undefined {
  return errorsAt(err, path).length > 0 ? errID(form, path) : undefined
}

/** An input's errors from the API, shown under it; the input names them with aria-describedby. */
export function FieldErr({ error, path, form }: { error: unknown; path: string; form: string }) {
  const fs = errorsAt(error, path)
  if (fs.length === 0) return null
  return <span class="field-err" id={errID(form, path)} data-testid="field-error" data-field={path}>{fs.map((f) => f.message).join('; ')}</span>
}

/** An error box for what no field holds: the message, and the field errors not in fields. */
export function FormError({ error, fields }: { error: unknown; fields: string[] }) {
  if (!error) return null
  if (error instanceof ApiError && error.errors.length > 0) {
    const rest = error.errors.filter((f) => !fields.some((p) => f.field === p || f.field.startsWith(p + '.') || f.field.startsWith(p + '[')))
    return <ErrorBox error={new ApiError(error.status, error.type, error.message, rest)} />
  }
  return <ErrorBox error={error} />
}

/**
 * The names of the company's keys and agents, by id, to show beside ids (usage, audit). What
 * the signed-in key may not list (keys need keys:manage) stays an id; the rest still shows.
 */
export function useNames(): { keys: Map<string, ApiKey>; agents: Map<string, Agent> } {
  const [keys, setKeys] = useState(new Map<string, ApiKey>())
  const [agents, setAgents] = useState(new Map<string, Agent>())
  useEffect(() => {
    api<ApiKey[]>('GET', 'api-keys/?limit=100').then((ks) => setKeys(new Map(ks.map((k) => [k.id, k]))), () => {})
    api<Agent[]>('GET', 'agent/?limit=100').then((as) => setAgents(new Map(as.map((a) => [a.id, a]))), () => {})
  }, [])
  return { keys, agents }
}

/** A key shown by its name and prefix, or by its short id when it is not listed. */
export function keyLabel(keys: Map<string, ApiKey>, id: string): string {
  if (id === '') return 'no key'
  const k = keys.get(id)
  return k ? `${k.name || 'unnamed'} (${k.prefix}…)` : `key ${id.slice(0, 8)}`
}

/**
 * What a screen says when the signed-in key may not see it (403): which scope it needs. Any other
 * error is shown by children (the screen's own error box), or an error box when none is given.
 */
export function Forbidden({ error, scope, children }: { error: unknown; scope: string; children?: ComponentChildren }) {
  if (!(error instanceof ApiError) || error.status !== 403) return <>{children ?? <ErrorBox error={error} />}</>
  return (
    <p class="notice" role="alert" data-testid="ops-forbidden">
      The key you signed in with may not see this: it needs the <code>{scope}</code> scope. Sign in with
      such a key (<code>make dev</code>&apos;s development key is an admin key, which holds every scope).
    </p>
  )
}

/** A count for people: 1,234. */
export function num(n: number): string {
  return n.toLocaleString()
}

/** Dollars for people: with cents, or two significant digits below a cent. */
export function usd(n: number): string {
  if (n === 0) return '$0.00'
  return n < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(2)}`
}
