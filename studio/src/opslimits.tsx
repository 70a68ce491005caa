// Operations → Limits: the company's limits (requests per minute of all its keys, monthly token
// and cost budgets; GET and PUT /limits/, admin only) against this month's usage, and each key's
// own limits (rate limit and budgets, set when the key is created) with what it used this month.
import { useEffect, useState } from 'preact/hooks'
import { api, type ApiKey } from './api'
import { describedBy, errorsAt, FieldErr, Forbidden, FormError, keyLabel, num, usd, type CompanyLimits, type UsageReport } from './ops'
import { ROOT } from './router'
import { Section, Spinner, when } from './ui'

type Field = 'requests_per_minute' | 'monthly_tokens' | 'monthly_cost_usd'

const FIELDS: { name: Field; label: string; hint: string; step: string }[] = [
  { name: 'requests_per_minute', label: 'Requests per minute', hint: 'all the company’s keys together, after each key’s own limit', step: '1' },
  { name: 'monthly_tokens', label: 'Monthly tokens', hint: 'input plus output tokens of model calls per UTC calendar month', step: '1' },
  { name: 'monthly_cost_usd', label: 'Monthly cost (USD)', hint: 'priced model calls per UTC calendar month; 0 allows none', step: 'any' },
]

/** This UTC month's first day and today, as the usage report takes them. */
function thisMonth(): { from: string; to: string } {
  const today = new Date().toISOString().slice(0, 10)
  return { from: today.slice(0, 8) + '01', to: today }
}

/** A value of a limit for people: "none" when there is none. */
function shown(f: Field, v: number | null | undefined): string {
  if (v === null || v === undefined) return 'none'
  return f === 'monthly_cost_usd' ? usd(v) : num(v)
}

export function Limits() {
  const [limits, setLimits] = useState<CompanyLimits | null>(null)
  const [form, setForm] = useState<Record<Field, string>>({ requests_per_minute: '', monthly_tokens: '', monthly_cost_usd: '' })
  const [loadError, setLoadError] = useState<unknown>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState<string | null>(null)
  const [month, setMonth] = useState<UsageReport | null>(null)
  const [reload, setReload] = useState(0)
  useEffect(() => {
    api<CompanyLimits>('GET', 'limits/').then((l) => { setLimits(l); setForm(formOf(l)) }, setLoadError)
  }, [])
  useEffect(() => {
    const m = thisMonth()
    api<UsageReport>('GET', `usage/?from=${m.from}&to=${m.to}&group_by=api_key`).then(setMonth, () => setMonth(null))
  }, [reload])

  function formOf(l: CompanyLimits): Record<Field, string> {
    const s = (v: number | null) => (v === null ? '' : String(v))
    return { requests_per_minute: s(l.requests_per_minute), monthly_tokens: s(l.monthly_tokens), monthly_cost_usd: s(l.monthly_cost_usd) }
  }
  async function save(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setSaved(null)
    try {
      // An empty field clears its limit; a number sets it (the API checks it and names the field).
      const body = Object.fromEntries(FIELDS.map(({ name }) => [name, form[name].trim() === '' ? null : Number(form[name])]))
      const l = await api<CompanyLimits>('PUT', 'limits/', body)
      setLimits(l)
      setForm(formOf(l))
      setSaved(new Date().toISOString())
      setReload((n) => n + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const used = month?.total
  const names = FIELDS.map((f) => f.name)
  return (
    <div class="stack">
      <Section title="Company limits" actions={!limits && !loadError ? <Spinner /> : undefined}>
        <p class="hint">Over a monthly budget every execute of the company answers 429 before any model call until the month ends; a change applies at once here and within 30 seconds everywhere. Empty: no limit.</p>
        {loadError ? <Forbidden error={loadError} scope="admin" /> : null}
        <form onSubmit={save} class="editor" noValidate data-testid="limits-form">
          <div class="row">
            {FIELDS.map((f) => (
              <div class="field" key={f.name}>
                <label>{f.label} <input data-testid={'limits-' + f.name} type="number" inputMode="decimal" step={f.step} value={form[f.name]} placeholder="no limit"
                  disabled={!limits} aria-invalid={errorsAt(error, f.name).length > 0} aria-describedby={[`limits-hint-${f.name}`, describedBy(error, 'limits', f.name)].filter(Boolean).join(' ')}
                  onInput={(e) => setForm({ ...form, [f.name]: e.currentTarget.value })} /></label>
                <small id={`limits-hint-${f.name}`}>{f.hint}</small>
                <FieldErr error={error} path={f.name} form="limits" />
              </div>
            ))}
          </div>
          <div>
            <button type="submit" data-testid="limits-save" disabled={busy || !limits}>Save limits</button>
            {busy && <Spinner label="Saving" />}
            {saved && !error && <span class="ok" role="status" data-testid="limits-saved"> Saved {when(saved)}.</span>}
          </div>
          <FormError error={error} fields={names} />
        </form>
        <dl class="totals" data-testid="limits-used">
          <div><dt>Tokens this month</dt><dd><b>{used ? num(used.input_tokens + used.output_tokens) : '…'}</b> of {shown('monthly_tokens', limits?.monthly_tokens)}</dd></div>
          <div><dt>Cost this month</dt><dd><b>{used ? usd(used.cost_usd) : '…'}</b> of {shown('monthly_cost_usd', limits?.monthly_cost_usd)}</dd></div>
          <div><dt>Requests this month</dt><dd><b>{used ? num(used.requests) : '…'}</b></dd></div>
        </dl>
      </Section>
      <KeyLimits month={month} />
    </div>
  )
}

/** Each key's own limits beside what it used this month; set when a key is created (Settings). */
function KeyLimits({ month }: { month: UsageReport | null }) {
  const [keys, setKeys] = useState<ApiKey[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api<ApiKey[]>('GET', 'api-keys/?limit=100').then(setKeys, setError)
  }, [])
  const usedBy = new Map((month?.data ?? []).map((r) => [r.api_key_id ?? '', r]))
  const byID = new Map((keys ?? []).map((k) => [k.id, k]))
  const live = (keys ?? []).filter((k) => !k.revoked_at && Date.parse(k.expires_at) > Date.now())
  return (
    <Section title="Keys' limits">
      <p class="hint">A key&apos;s rate limit and monthly budgets are its own and are set when it is made (<a href={ROOT + 'settings'}>Settings → API keys</a>); to change them, make a key with other limits and revoke the old one.</p>
      {error ? <Forbidden error={error} scope="keys:manage" /> : null}
      <div class={keys === null && !error ? 'hold-table' : undefined}>
        <table class="grid" tabIndex={0} aria-label="Each key's limits and use this month">
          <thead><tr><th>Key</th><th class="num">Requests per minute</th><th class="num">Monthly tokens</th><th class="num">Monthly cost</th><th class="num">Tokens this month</th><th class="num">Cost this month</th></tr></thead>
          <tbody>
            {live.map((k) => {
              const u = usedBy.get(k.id)
              return (
                <tr key={k.id} data-testid="limits-key-row" data-id={k.id}>
                  <td>{keyLabel(byID, k.id)}<br /><small>{k.owner}</small></td>
                  <td class="num">{shown('requests_per_minute', k.limits.requests_per_minute)}</td>
                  <td class="num">{shown('monthly_tokens', k.limits.monthly_tokens)}</td>
                  <td class="num">{shown('monthly_cost_usd', k.limits.monthly_cost_usd)}</td>
                  <td class="num">{u ? num(u.input_tokens + u.output_tokens) : '0'}</td>
                  <td class="num">{u ? usd(u.cost_usd) : usd(0)}</td>
                </tr>
              )
            })}
            {keys !== null && live.length === 0 && (
              <tr class="empty" data-testid="empty"><td colSpan={6}>No live keys to show. Create one in <a href={ROOT + 'settings'}>Settings → API keys</a>, with a rate limit if it should have one.</td></tr>
            )}
          </tbody>
        </table>
      </div>
    </Section>
  )
}
