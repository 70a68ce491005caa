// Knowledge, three screens apart under one sub-navigation: files (drag and drop; large ones
// through the presigned upload with a progress bar), collections (knowledgecollections.tsx:
// opened, their files added and removed, deleted) and knowledge bases (knowledgebases.tsx: built
// from files or a collection, live status, sync, delete, search, and each file's chunks).
import { useRef, useState } from 'preact/hooks'
import { api, postForm, putWithProgress, type FileRecord, type PendingUpload } from './api'
import { CollectionDetail, Collections } from './knowledgecollections'
import { Chunks, KBDetail, KnowledgeBases } from './knowledgebases'
import { ROOT } from './router'
import { Confirm, ErrorBox, messageOf, Section, usePaged, when } from './ui'


const SMALL = 4 * 1024 * 1024

/** A size for people: 812 B, 4.9 KB, 23 MB (binary units, one decimal under ten). */
export function size(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

/** Whether a paged list has answered once (before that, its space is held: .hold-list, .hold-table). */
export function useLoaded(list: { loading: boolean; error: unknown }): boolean {
  const asked = useRef(false)
  if (list.loading) asked.current = true
  return (asked.current && !list.loading) || list.error != null
}


/** The knowledge screens, in the order of the sub-navigation: /studio/knowledge/<screen>. */
const SCREENS = [
  ['files', 'Files'],
  ['collections', 'Collections'],
  ['bases', 'Knowledge bases'],
] as const

/**
 * The Knowledge area: its sub-navigation and the screen named by sub (default files); rest is
 * the path after it (a collection's or a knowledge base's id, then "chunks").
 */
export function Knowledge({ sub, rest, query }: { sub?: string; rest: string[]; query: URLSearchParams }) {
  const at = SCREENS.find(([k]) => k === sub)?.[0] ?? 'files'
  let body
  switch (at) {
    case 'collections': body = rest[0] ? <CollectionDetail key={rest[0]} id={rest[0]} /> : <Collections />; break
    case 'bases': body = rest[0] ? (rest[1] === 'chunks' ? <Chunks kb={rest[0]} query={query} /> : <KBDetail key={rest[0]} id={rest[0]} />) : <KnowledgeBases />; break
    default: body = <Files />
  }
  return (
    <div class="stack">
      <nav aria-label="Knowledge" class="subnav">
        {SCREENS.map(([k, label]) => (
          <a key={k} href={ROOT + 'knowledge/' + k} data-testid={'knowledge-' + k} aria-current={k === at ? 'page' : undefined}>{label}</a>
        ))}
      </nav>
      {body}
    </div>
  )
}

let uploadSeq = 0

interface Upload { id: number; name: string; sent: number; total: number; error?: string; done?: boolean }

function Files() {
  const [reload, setReload] = useState(0)
  const onChange = () => setReload((x) => x + 1)
  const list = usePaged<FileRecord>('files/', 20, '', reload)
  const loaded = useLoaded(list)
  const [uploads, setUploads] = useState<Upload[]>([])
  const [tags, setTags] = useState('')
  const [over, setOver] = useState(false)

  async function upload(files: FileList | File[]) {
    for (const f of Array.from(files)) {
      const id = ++uploadSeq
      setUploads((us) => [...us, { id, name: f.name, sent: 0, total: f.size }])
      const set = (p: Partial<Upload>) => setUploads((us) => us.map((x) => (x.id === id ? { ...x, ...p } : x)))
      try {
        const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean)
        if (f.size <= SMALL) {
          const form = new FormData()
          form.append('file', f, f.name)
          if (tagList.length) form.append('tags', tagList.join(','))
          await postForm('files/', form)
        } else {
          const p = await api<PendingUpload>('POST', 'files/uploads/', { name: f.name, size: f.size, media_type: f.type || undefined })
          await putWithProgress(p.upload_url, p.headers, f, (sent, total) => set({ sent, total }))
          await api('POST', `files/${p.file_id}/complete/`)
        }
        set({ sent: f.size, done: true })
      } catch (e) {
        set({ error: messageOf(e) })
      }
    }
    onChange()
  }

  const [error, setError] = useState<unknown>(null)
  async function remove(f: FileRecord) {
    setError(null)
    try { await api('DELETE', `files/${f.id}/`); onChange() } catch (e) { setError(e) }
  }

  return (
    <Section title="Files">
      <div class={'drop' + (over ? ' over' : '')} data-testid="upload-drop"
        onDragOver={(e) => { e.preventDefault(); setOver(true) }} onDragLeave={() => setOver(false)}
        onDrop={(e) => { e.preventDefault(); setOver(false); if (e.dataTransfer?.files) upload(e.dataTransfer.files) }}>
        <p>Drop files here, or</p>
        <label class="button">Choose files
          <input type="file" multiple class="sr-only" data-testid="upload-input" onChange={(e) => { const fs = e.currentTarget.files; if (fs) upload(Array.from(fs)); e.currentTarget.value = '' }} />
        </label>
        <label>Tags (comma-separated) <input value={tags} onInput={(e) => setTags(e.currentTarget.value)} /></label>
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-live="polite">
          {uploads.map((u) => (
            <li key={u.id} data-testid="upload-row">
              <span class="name">{u.name}</span>{' '}
              <progress max={u.total || 1} value={u.sent} aria-label={`Upload of ${u.name}`} />{' '}
              {u.error ? <span class="error">{u.error}</span> : u.done ? `uploaded · ${size(u.total)}` : `${size(u.sent)} of ${size(u.total)} · ${Math.round((u.sent / (u.total || 1)) * 100)}%`}
            </li>
          ))}
        </ul>
      )}
      <ErrorBox error={error} />
      <ErrorBox error={list.error} />
      {/* Three rows' space is held while the files load, and the table appears whole once they
          have: its columns then never re-flow under the reader's eyes. */}
      <div class="hold-table">{loaded && <table class="grid">
        <thead><tr><th>Name</th><th>Type</th><th>Size</th><th>Status</th><th>Tags</th><th>Added</th><th><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          {list.items.map((f) => (
            <tr key={f.id} data-testid="file-row">
              <td>{f.original_filename}</td><td>{f.file_type}</td><td title={`${f.size_bytes.toLocaleString()} bytes`}>{size(f.size_bytes)}</td>
              <td>{f.status}{f.error ? `: ${f.error}` : ''}</td><td>{f.tags?.join(', ')}</td><td>{when(f.created_at)}</td>
              <td><Confirm label="Delete" name={`Delete ${f.original_filename}`} question="From every knowledge base and collection?" onConfirm={() => remove(f)} /></td>
            </tr>
          ))}
          {loaded && list.items.length === 0 && <tr class="empty" data-testid="empty"><td colSpan={7}>No files yet. Drop files above or choose them; then group them in a collection or build a knowledge base of them (Collections, Knowledge bases above).</td></tr>}
        </tbody>
      </table>}</div>
      {list.pager}
    </Section>
  )
}

