// Operations → Usage and cost: the company's requests, executions, tokens and cost over a range
// of UTC days (GET /usage/), by day, by API key or by agent, drawn as bars (SVG drawn here: no
// chart library) with the same numbers in a table beside it for screen readers and copying.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { describedBy, FieldErr, Forbidden, FormError, keyLabel, num, usd, useNames, type UsageReport, type UsageRow } from './ops'
import { ROOT } from './router'
import { Section, Spinner } from './ui'

type Group = UsageReport['group_by']
type Counts = UsageReport['total']

/** What the bars measure: a label and how to read it from a row. */
const METRICS = {
  requests: { label: 'Requests', of: (c: Counts) => c.requests, fmt: num },
  executions: { label: 'Executions', of: (c: Counts) => c.executions, fmt: num },
  tokens: { label: 'Tokens (input + output)', of: (c: Counts) => c.input_tokens + c.output_tokens, fmt: num },
  cost: { label: 'Cost (USD)', of: (c: Counts) => c.cost_usd, fmt: usd },
} as const
type Metric = keyof typeof METRICS

const GROUPS: [Group, string][] = [['day', 'Day'], ['api_key', 'API key'], ['agent', 'Agent']]
const RANGES: [string, string][] = [['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days'], ['month', 'This month'], ['custom', 'Custom']]

const DAY = 86_400_000

/** A UTC day as YYYY-MM-DD. */
function iso(t: number): string {
  return new Date(t).toISOString().slice(0, 10)
}

/** The from and to days of a preset range, ending today (UTC). */
function rangeOf(preset: string): { from: string; to: string } {
  const today = Date.now()
  if (preset === 'month') return { from: iso(today).slice(0, 8) + '01', to: iso(today) }
  return { from: iso(today - (Number(preset) - 1) * DAY), to: iso(today) }
}

/** A day for people: "Nov 3", in UTC (the report's days are UTC days). */
function dayLabel(d: string): string {
  return new Date(d + 'T00:00:00Z').toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })
}

export function Usage() {
  const [preset, setPreset] = useState('30')
  const [range, setRange] = useState(() => rangeOf('30'))
  const [group, setGroup] = useState<Group>('day')
  const [metric, setMetric] = useState<Metric>('requests')
  const [report, setReport] = useState<UsageReport | null>(null)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const names = useNames()
  useEffect(() => {
    let live = true
    setLoading(true)
    setError(null)
    api<UsageReport>('GET', `usage/?from=${range.from}&to=${range.to}&group_by=${group}`)
      .then((r) => live && setReport(r), (e) => live && setError(e))
      .finally(() => live && setLoading(false))
    return () => { live = false }
  }, [range.from, range.to, group])

  function pick(p: string) {
    setPreset(p)
    if (p !== 'custom') setRange(rangeOf(p))
  }
  const m = METRICS[metric]
  const label = (r: UsageRow): string => {
    if (group === 'day') return r.day ? dayLabel(r.day) : '?'
    if (group === 'api_key') return keyLabel(names.keys, r.api_key_id ?? '')
    const id = r.agent_id ?? ''
    return id === '' ? 'inline configurations' : names.agents.get(id)?.name ?? `agent ${id.slice(0, 8)}`
  }
  const rows = report && report.group_by === group ? (group === 'day' ? everyDay(report) : report.data) : []
  const bars = rows.map((r) => ({ label: label(r), value: m.of(r) }))
  const nothing = !!report && report.total.requests === 0 && report.data.length === 0
  return (
    <Section title="Usage and cost" actions={loading ? <Spinner /> : undefined}>
      <form class="row" onSubmit={(e) => e.preventDefault()} aria-label="Range and grouping">
        <label>Range <select data-testid="usage-range" value={preset} onChange={(e) => pick(e.currentTarget.value)}>
          {RANGES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
        </select></label>
        <div class="field"><label>From (UTC) <input data-testid="usage-from" type="date" value={range.from} aria-describedby={describedBy(error, 'usage', 'from')}
          onChange={(e) => { setPreset('custom'); setRange({ ...range, from: e.currentTarget.value }) }} /></label>
        <FieldErr error={error} path="from" form="usage" /></div>
        <div class="field"><label>To (UTC) <input data-testid="usage-to" type="date" value={range.to} aria-describedby={describedBy(error, 'usage', 'to')}
          onChange={(e) => { setPreset('custom'); setRange({ ...range, to: e.currentTarget.value }) }} /></label>
        <FieldErr error={error} path="to" form="usage" /></div>
        <label>Show <select data-testid="usage-metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)}>
          {(Object.keys(METRICS) as Metric[]).map((k) => <option key={k} value={k}>{METRICS[k].label}</option>)}
        </select></label>
      </form>
      <fieldset>
        <legend>Group by</legend>
        {GROUPS.map(([g, l]) => (
          <label key={g} class="check"><input type="radio" name="usage-group" data-testid={'usage-group-' + g} checked={group === g} onChange={() => setGroup(g)} /> {l}</label>
        ))}
      </fieldset>
      {error ? <Forbidden error={error} scope="usage:read"><FormError error={error} fields={['from', 'to']} /></Forbidden> : null}
      <Totals total={report?.total} />
      {nothing && (
        <p class="empty" data-testid="empty">No usage from {range.from} to {range.to} yet. Run an agent in the <a href={ROOT + 'playground'}>Playground</a> or widen the range: a run counts as soon as it ends.</p>
      )}
      <Chart bars={bars} fmt={m.fmt} days={group === 'day'} title={`${m.label} by ${GROUPS.find(([g]) => g === group)?.[1].toLowerCase()}, ${range.from} to ${range.to}`} />
      {/* Focusable: at a phone's width the table scrolls sideways, and a keyboard must reach it. */}
      <div class={report ? undefined : 'hold-table'}>
        <table class="grid" data-testid="usage-table" tabIndex={0}>
          <caption class="sr-only">The chart&apos;s numbers</caption>
          <thead><tr><th>{GROUPS.find(([g]) => g === group)?.[1]}</th><th class="num">Requests</th><th class="num">Executions</th><th class="num">Input tokens</th><th class="num">Output tokens</th><th class="num">Cost</th><th class="num">Unpriced runs</th></tr></thead>
          <tbody>
            {(group === 'day' ? rows.filter((r) => r.requests > 0 || r.executions > 0 || r.cost_usd > 0) : rows).map((r) => (
              <tr key={label(r)} data-testid="usage-row" data-id={r.day ?? r.api_key_id ?? r.agent_id}>
                <td>{label(r)}</td><td class="num">{num(r.requests)}</td><td class="num">{num(r.executions)}</td>
                <td class="num">{num(r.input_tokens)}</td><td class="num">{num(r.output_tokens)}</td><td class="num">{usd(r.cost_usd)}</td><td class="num">{num(r.unpriced_requests)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {(report?.total.unpriced_requests ?? 0) > 0 && <p class="hint">Runs of a model without a price are counted but not costed (see docs/configuration.md, MODEL_PRICES).</p>}
    </Section>
  )
}

/** Every day of the report's range, those without counts as zeros, so the axis is time. */
function everyDay(r: UsageReport): UsageRow[] {
  const by = new Map(r.data.map((d) => [d.day, d]))
  const out: UsageRow[] = []
  const zero = { requests: 0, executions: 0, input_tokens: 0, output_tokens: 0, embedding_tokens: 0, cost_usd: 0, unpriced_requests: 0 }
  for (let t = Date.parse(r.from + 'T00:00:00Z'); t <= Date.parse(r.to + 'T00:00:00Z') && out.length < 400; t += DAY) {
    const day = iso(t)
    out.push(by.get(day) ?? { ...zero, day })
  }
  return out
}

function Totals({ total }: { total?: Counts }) {
  const cells: [string, string, string][] = total
    ? [['requests', 'Requests', num(total.requests)], ['executions', 'Executions', num(total.executions)],
      ['tokens', 'Tokens in / out', `${num(total.input_tokens)} / ${num(total.output_tokens)}`], ['cost', 'Cost', usd(total.cost_usd)]]
    : [['requests', 'Requests', '…'], ['executions', 'Executions', '…'], ['tokens', 'Tokens in / out', '…'], ['cost', 'Cost', '…']]
  return (
    <dl class="totals" data-testid="usage-total">
      {cells.map(([k, l, v]) => <div key={k}><dt>{l}</dt><dd data-metric={k}><b>{v}</b></dd></div>)}
    </dl>
  )
}

const W = 720

/**
 * Bars of values: vertical over days (a label every few days), horizontal for keys and agents
 * (their names beside the bars). An image to assistive technology, named by title; the table
 * below holds its numbers.
 */
function Chart({ bars, fmt, days, title }: { bars: { label: string; value: number }[]; fmt: (n: number) => string; days: boolean; title: string }) {
  const max = Math.max(0, ...bars.map((b) => b.value))
  const top = max > 0 ? max : 1
  if (days) {
    const H = 200, left = 56, bottom = 22, right = 8, topPad = 10
    const bw = bars.length ? (W - left - right) / bars.length : 0
    const every = Math.max(1, Math.ceil(bars.length / 10))
    const y = (v: number) => topPad + (H - topPad - bottom) * (1 - v / top)
    return (
      <svg class="chart days" data-testid="usage-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
        <line class="axis" x1={left} y1={H - bottom} x2={W - right} y2={H - bottom} />
        {[0, 0.5, 1].map((f) => <text key={f} x={left - 6} y={y(top * f) + 4} text-anchor="end">{fmt(max > 0 ? top * f : 0)}</text>)}
        {bars.map((b, i) => (
          <g key={b.label + i}>
            <rect class="bar" data-testid="usage-bar" data-label={b.label} data-value={b.value} x={left + i * bw + bw * 0.15} y={y(b.value)} width={Math.max(1, bw * 0.7)} height={Math.max(0, H - bottom - y(b.value))}>
              <title>{`${b.label}: ${fmt(b.value)}`}</title>
            </rect>
            {i % every === 0 && <text x={left + i * bw + bw / 2} y={H - 6} text-anchor="middle">{b.label}</text>}
          </g>
        ))}
      </svg>
    )
  }
  const row = 24, labelW = 220, right = 90, topPad = 6
  const shown = bars.slice(0, 15)
  const H = Math.max(1, shown.length) * row + topPad * 2
  const x = (v: number) => ((W - labelW - right) * v) / top
  return (
    <svg class="chart" data-testid="usage-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
      <line class="axis" x1={labelW} y1={topPad} x2={labelW} y2={H - topPad} />
      {shown.map((b, i) => (
        <g key={b.label + i}>
          <text x={labelW - 8} y={topPad + i * row + row / 2 + 4} text-anchor="end">{b.label.length > 32 ? b.label.slice(0, 31) + '…' : b.label}</text>
          <rect class="bar" data-testid="usage-bar" data-label={b.label} data-value={b.value} x={labelW} y={topPad + i * row + 4} width={Math.max(b.value > 0 ? 2 : 0, x(b.value))} height={row - 8}>
            <title>{`${b.label}: ${fmt(b.value)}`}</title>
          </rect>
          <text x={labelW + x(b.value) + 6} y={topPad + i * row + row / 2 + 4}>{fmt(b.value)}</text>
        </g>
      ))}
    </svg>
  )
}
