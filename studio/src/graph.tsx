// A graph configuration drawn as its graph: the agents as boxes in columns by their distance from
// __start__, the edges as arrows, the entry node marked, and the same as text for screen readers.
// The flow is the service's (domain.FlowOf): with edges, the edges, plus __start__ → entry_point
// (or the first agent) when no edge leaves __start__; without, the agents in order.

export const START = '__start__', END = '__end__'

export interface Flow { nodes: string[]; edges: { from: string; to: string }[]; entry: string }

/** The flow of a configuration with agents, or null for a flat one (or one too broken to draw). */
export function flowOf(cfg: Record<string, unknown>): Flow | null {
  if (!Array.isArray(cfg.agents)) return null
  const names = cfg.agents.map((a) => (a && typeof a === 'object' ? (a as Record<string, unknown>).name : undefined))
    .filter((n): n is string => typeof n === 'string' && n !== '')
  if (names.length === 0) return null
  const entryPoint = typeof cfg.entry_point === 'string' && cfg.entry_point ? cfg.entry_point : names[0]
  const edges: Flow['edges'] = []
  if (Array.isArray(cfg.edges)) {
    for (const e of cfg.edges) {
      const m = e && typeof e === 'object' ? (e as Record<string, unknown>) : {}
      if (typeof m.from === 'string' && typeof m.to === 'string') edges.push({ from: m.from, to: m.to })
    }
    if (!edges.some((e) => e.from === START)) edges.unshift({ from: START, to: entryPoint })
  } else {
    let prev = START
    for (const n of names) { edges.push({ from: prev, to: n }); prev = n }
    edges.push({ from: prev, to: END })
  }
  const starts = edges.filter((e) => e.from === START).map((e) => e.to)
  const nodes = [START, ...names.filter((n) => n !== START && n !== END)]
  // Ends an edge names that no agent has are drawn too: the validation names them.
  for (const e of edges) for (const n of [e.from, e.to]) if (n !== END && !nodes.includes(n)) nodes.push(n)
  nodes.push(END)
  return { nodes, edges, entry: starts.length === 1 ? starts[0] : entryPoint }
}

const W = 132, H = 34, GX = 56, GY = 18

/** The column of each node: its longest distance from __start__ along edges that do not loop back. */
function columns(f: Flow): Map<string, number> {
  const col = new Map<string, number>([[START, 0]])
  const out = (n: string) => f.edges.filter((e) => e.from === n).map((e) => e.to)
  // Depth-first, without revisiting the path, so that a cycle cannot make the columns grow forever;
  // the steps are bounded too, so that a dense graph of many agents cannot keep the page busy.
  let steps = 0
  const walk = (n: string, path: Set<string>) => {
    for (const m of out(n)) {
      if (++steps > 20000) return
      if (path.has(m) || m === START) continue
      const c = (col.get(n) ?? 0) + 1
      if ((col.get(m) ?? -1) < c && c <= f.nodes.length) {
        col.set(m, c)
        path.add(m); walk(m, path); path.delete(m)
      }
    }
  }
  walk(START, new Set([START]))
  const last = Math.max(1, ...[...col.entries()].filter(([n]) => n !== END).map(([, c]) => c + 1))
  col.set(END, Math.max(last, col.get(END) ?? 0))
  for (const n of f.nodes) if (!col.has(n)) col.set(n, 1) // unreachable from __start__
  return col
}

/** The graph in words: its agents, the entry, and every edge. */
export function describe(f: Flow): string {
  const agents = f.nodes.filter((n) => n !== START && n !== END).map((n) => n + (n === f.entry ? ' (entry)' : ''))
  return `Graph of ${agents.length} agents: ${agents.join(', ')}. Edges: ${f.edges.map((e) => label(e.from) + ' to ' + label(e.to)).join('; ')}.`
}

function label(n: string): string {
  return n === START ? 'start' : n === END ? 'end' : n
}

export function Graph({ config }: { config: Record<string, unknown> }) {
  const f = flowOf(config)
  if (!f) return null
  const col = columns(f)
  const rows = new Map<number, number>()
  const pos = new Map<string, { x: number; y: number }>()
  for (const n of f.nodes) {
    const c = col.get(n) ?? 0
    const r = rows.get(c) ?? 0
    rows.set(c, r + 1)
    pos.set(n, { x: 8 + c * (W + GX), y: 8 + r * (H + GY) })
  }
  const width = 16 + (Math.max(...col.values()) + 1) * (W + GX) - GX
  const height = 16 + Math.max(...rows.values()) * (H + GY) - GY
  const shown = (s: string) => (s.length > 16 ? s.slice(0, 15) + '…' : s)
  return (
    <figure class="graph" data-testid="agent-graph">
      <figcaption id="agent-graph-title">The graph: {f.nodes.length - 2} agents, entry <b>{f.entry}</b></figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={describe(f)}>
          <defs>
            <marker id="graph-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M0 0L10 5L0 10z" class="graph-head" />
            </marker>
          </defs>
          {f.edges.map((e, i) => {
            const a = pos.get(e.from), b = pos.get(e.to)
            if (!a || !b) return null
            const back = (col.get(e.to) ?? 0) <= (col.get(e.from) ?? 0)
            const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2
            // A forward edge is a curve from right side to left side; one going back loops under the boxes.
            const d = back
              ? `M${a.x + W / 2} ${a.y + H} C${a.x + W / 2} ${height + 4}, ${b.x + W / 2} ${height + 4}, ${b.x + W / 2} ${b.y + H}`
              : `M${x1} ${y1} C${x1 + GX / 2} ${y1}, ${x2 - GX / 2} ${y2}, ${x2} ${y2}`
            return <path key={i} d={d} class={'graph-edge' + (back ? ' back' : '')} data-testid="graph-edge" data-from={e.from} data-to={e.to} marker-end="url(#graph-arrow)" />
          })}
          {f.nodes.map((n) => {
            const p = pos.get(n)!
            const special = n === START || n === END
            return (
              <g key={n} data-testid="graph-node" data-name={n} data-entry={n === f.entry ? 'true' : undefined}
                class={'graph-node' + (special ? ' special' : '') + (n === f.entry ? ' entry' : '')} transform={`translate(${p.x} ${p.y})`}>
                <rect width={W} height={H} rx={special ? H / 2 : 6} />
                <text x={W / 2} y={H / 2} dominant-baseline="central" text-anchor="middle">{shown(label(n))}</text>
              </g>
            )
          })}
        </svg>
      <details class="graph-text" data-testid="graph-text">
        <summary>The graph as text</summary>
        <p>Agents: {f.nodes.filter((n) => n !== START && n !== END).map((n, i) => <span key={n}>{i > 0 && ', '}{n}{n === f.entry ? ' (entry)' : ''}</span>)}.</p>
        <ul aria-label="Edges">
          {f.edges.map((e, i) => <li key={i}>{label(e.from)} → {label(e.to)}</li>)}
        </ul>
      </details>
    </figure>
  )
}
