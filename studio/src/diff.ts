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
