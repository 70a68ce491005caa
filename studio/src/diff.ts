// A line diff (longest common subsequence) laid out side by side.

export interface DiffRow { kind: 'same' | 'del' | 'add' | 'change'; left?: string; right?: string }

export function diffLines(a: string[], b: string[]): DiffRow[] {
  const n = a.length, m = b.length
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0))
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  const out: DiffRow[] = []
  let i = 0, j = 0
  const dels: string[] = [], adds: string[] = []
  const flush = () => {
    while (dels.length || adds.length) {
      const l = dels.shift(), r = adds.shift()
      out.push({ kind: l !== undefined && r !== undefined ? 'change' : l !== undefined ? 'del' : 'add', left: l, right: r })
    }
  }
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { flush(); out.push({ kind: 'same', left: a[i], right: b[j] }); i++; j++ }
    else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) adds.push(b[j++])
    else dels.push(a[i++])
  }
  flush()
  return out
}

// Key order. The service keeps a configuration as a map and writes its keys sorted, so a text
// comes back reordered after a save. The studio keeps the order the user wrote: what it saved is
// remembered for the page's life, and what it shows of an agent (its editor, both sides of a
// version diff) is put in that order, keys it does not know after the ones it does, in the
// service's order. Both sides of a diff then share one order, so an order alone is never a change.

const written = new Map<string, unknown>()

/** Remembers the configuration an agent was saved with (its keys in the user's order). */
export function rememberOrder(id: string, config: unknown) {
  written.set(id, config)
}

/** An agent's configuration with its keys in the order the user last saved them in, when known. */
export function inOrder<T>(id: string, config: T): T {
  return written.has(id) ? orderLike(config, written.get(id)) : config
}

/** value with the keys of each object in the order of the same object in like, then the rest. */
export function orderLike<T>(value: T, like: unknown): T {
  if (Array.isArray(value)) return value.map((v, i) => orderLike(v, Array.isArray(like) ? like[i] : undefined)) as T
  if (!value || typeof value !== 'object') return value
  const v = value as Record<string, unknown>
  const l = like && typeof like === 'object' && !Array.isArray(like) ? (like as Record<string, unknown>) : {}
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(l)) if (Object.hasOwn(v, k)) out[k] = orderLike(v[k], l[k])
  for (const k of Object.keys(v)) if (!Object.hasOwn(out, k)) out[k] = orderLike(v[k], undefined)
  return out as T
}
