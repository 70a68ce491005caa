// Knowledge › Collections: the list and a new collection with its files; one collection opened
// (/studio/knowledge/collections/<id>) shows its files, adds and removes them, has its name and
// description edited, and is deleted after a confirmation. Its files stay in every case.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, type Collection, type FieldError, type FileRecord } from './api'
import type { components } from './schema'
import { size, useLoaded } from './knowledge'
import { navigate, ROOT } from './router'
import { Confirm, ErrorBox, Section, Spinner, usePaged, when } from './ui'

type CollectionDetailRecord = components['schemas']['CollectionDetail']

/** The collections of the company, each opening its own screen, and the form of a new one. */
export function Collections() {
  const [reload, setReload] = useState(0)
  const list = usePaged<Collection>('collections/', 20, '', reload)
  const loaded = useLoaded(list)
  const files = usePaged<FileRecord>('files/', 100, '', reload)
  const filesLoaded = useLoaded(files)
  const [name, setName] = useState('')
  const [picked, setPicked] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  async function create(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const c = await api<Collection>('POST', 'collections/', { name })
      if (picked.length) await api('POST', `collections/${c.id}/files/`, { file_ids: picked })
      setName('')
      setPicked([])
      setReload((x) => x + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Section title="Collections">
      <ErrorBox error={list.error} />
      <ul class="list hold-list">
        {list.items.map((c) => (
          <li key={c.id} data-testid="collection-row">
            <a href={ROOT + 'knowledge/collections/' + c.id} data-testid="collection-link">{c.name}</a> <small>{c.data_source_count} files · {size(c.total_size)} · {c.status}</small>
          </li>
        ))}
        {loaded && list.items.length === 0 && <li class="empty" data-testid="empty">No collections yet. A collection groups files: upload files under Files, then name a collection below and tick its files.</li>}
      </ul>
      {list.pager}
      <form onSubmit={create} class="editor">
        <label>New collection <input data-testid="collection-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required /></label>
        <fieldset>
          <legend>Files in it</legend>
          {!filesLoaded && files.items.length === 0 && <span class="check" aria-hidden="true">&nbsp;</span>}
          {files.items.map((f) => (
            <label key={f.id} class="check" data-testid="collection-file"><input type="checkbox" checked={picked.includes(f.id)} onChange={(e) => setPicked(e.currentTarget.checked ? [...picked, f.id] : picked.filter((x) => x !== f.id))} /> {f.original_filename}</label>
          ))}
          {filesLoaded && files.items.length === 0 && <p class="empty">No files yet: upload them under Files.</p>}
        </fieldset>
        <button type="submit" data-testid="collection-create" disabled={busy}>Create collection</button>
        {busy && <Spinner label="Creating" />}
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

/** One collection: its files (removable), files to add, and its deletion. */
export function CollectionDetail({ id }: { id: string }) {
  const [reload, setReload] = useState(0)
  const bump = () => setReload((x) => x + 1)
  const [coll, setColl] = useState<CollectionDetailRecord | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    let live = true
    api<CollectionDetailRecord>('GET', `collections/${id}/`).then((c) => live && setColl(c), (e) => live && setError(e))
    return () => { live = false }
  }, [id, reload])
  const members = usePaged<FileRecord>(`collections/${id}/files/`, 20, '', reload)
  const membersLoaded = useLoaded(members)
  const files = usePaged<FileRecord>('files/', 100, '', reload)
  const inIt = new Set(coll?.datasources.map((d) => d.id) ?? [])
  const addable = files.items.filter((f) => !inIt.has(f.id))
  const [picked, setPicked] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const [actionError, setActionError] = useState<unknown>(null)

  async function act(f: () => Promise<unknown>) {
    setBusy(true)
    setActionError(null)
    try { await f(); bump() } catch (e) { setActionError(e) } finally { setBusy(false) }
  }
  const add = (e: Event) => {
    e.preventDefault()
    act(async () => { await api('POST', `collections/${id}/files/`, { file_ids: picked }); setPicked([]) })
  }
  const remove = (f: FileRecord) => act(() => api('POST', `collections/${id}/bulk/`, { operation: 'remove_files', file_ids: [f.id] }))
  async function removeAll() {
    setActionError(null)
    try { await api('DELETE', `collections/${id}/`); navigate(ROOT + 'knowledge/collections') } catch (e) { setActionError(e) }
  }

  const [editing, setEditing] = useState(false)
  const editButton = useRef<HTMLButtonElement>(null)
  const refocus = useRef(false)
  useEffect(() => {
    if (!editing && refocus.current) { refocus.current = false; editButton.current?.focus() }
  }, [editing])
  const endEdit = (saved?: CollectionDetailRecord) => {
    if (saved) setColl(saved)
    refocus.current = true
    setEditing(false)
  }

  const back = <p><a href={ROOT + 'knowledge/collections'} data-testid="collection-back">← All collections</a></p>
  if (error) return <div>{back}<ErrorBox error={error} /></div>
  return (
    <div class="stack">
      {back}
      <Section title={coll ? coll.name : 'Collection'}
        actions={coll && <span>
          {!editing && <button type="button" ref={editButton} data-testid="collection-edit" aria-label={`Edit collection ${coll.name}`} onClick={() => setEditing(true)}>Edit</button>}{' '}
          <Confirm label="Delete" name={`Delete collection ${coll.name}`} question="Delete this collection? Its files stay, and knowledge bases built from it keep what they ingested." testid="collection-delete" onConfirm={removeAll} />
        </span>}>
        {editing && coll && <EditCollection coll={coll} onDone={endEdit} />}
        <p data-testid="collection-summary">{coll ? <>{coll.description && <>{coll.description} · </>}{coll.data_source_count} files · {size(coll.total_size)} · {coll.status} · created {when(coll.created_at)}</> : <Spinner />}</p>
        <ErrorBox error={actionError} />
        <ErrorBox error={members.error} />
        <div class="hold-table">{membersLoaded && <table class="grid">
          <thead><tr><th>Name</th><th>Type</th><th>Size</th><th>Added</th><th><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {members.items.map((f) => (
              <tr key={f.id} data-testid="collection-member">
                <td>{f.original_filename}</td><td>{f.file_type}</td><td>{size(f.size_bytes)}</td><td>{when(f.created_at)}</td>
                <td><button type="button" data-testid="collection-remove" aria-label={`Remove ${f.original_filename} from the collection`} disabled={busy} onClick={() => remove(f)}>Remove</button></td>
              </tr>
            ))}
            {members.items.length === 0 && <tr class="empty" data-testid="empty"><td colSpan={5}>No files in this collection yet: tick files below and add them.</td></tr>}
          </tbody>
        </table>}</div>
        {members.pager}
        <form onSubmit={add} class="editor">
          <fieldset>
            <legend>Add files</legend>
            {addable.map((f) => (
              <label key={f.id} class="check" data-testid="collection-add-file"><input type="checkbox" checked={picked.includes(f.id)} onChange={(e) => setPicked(e.currentTarget.checked ? [...picked, f.id] : picked.filter((x) => x !== f.id))} /> {f.original_filename}</label>
            ))}
            {!files.loading && addable.length === 0 && <p class="empty">Every file is in it already; upload more under Files.</p>}
          </fieldset>
          <button type="submit" data-testid="collection-add" disabled={busy || picked.length === 0}>Add to the collection</button>
          {busy && <Spinner label="Saving" />}
        </form>
      </Section>
    </div>
  )
}

/**
 * A collection's name and description edited: Save sends only what changed (PATCH, which
 * answers the collection as GET does) and the server's errors show at their fields; Cancel or
 * Escape leave it as it was. A rename changes only the label: knowledge bases name collections
 * by id.
 */
function EditCollection({ coll, onDone }: { coll: CollectionDetailRecord; onDone: (saved?: CollectionDetailRecord) => void }) {
  const [name, setName] = useState(coll.name)
  const [description, setDescription] = useState(coll.description)
  const [errors, setErrors] = useState<FieldError[]>([])
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const first = useRef<HTMLInputElement>(null)
  useEffect(() => { first.current?.focus() }, [])
  async function save(e: Event) {
    e.preventDefault()
    const change: Record<string, string> = {}
    if (name !== coll.name) change.name = name
    if (description !== coll.description) change.description = description
    if (Object.keys(change).length === 0) { onDone(); return }
    setBusy(true)
    setErrors([])
    setError(null)
    try {
      onDone(await api<CollectionDetailRecord>('PATCH', `collections/${coll.id}/`, change))
    } catch (err) {
      const fields = err instanceof ApiError ? err.errors.filter((f) => f.field === 'name' || f.field === 'description') : []
      setErrors(fields)
      setError(fields.length ? null : err)
    } finally {
      setBusy(false)
    }
  }
  const at = (field: string) => errors.filter((f) => f.field === field)
  const shown = (field: string) => at(field).map((f, i) => <span key={i} class="field-err" data-testid="field-error" data-field={f.field}>{f.message}</span>)
  return (
    <form class="editor" data-testid="collection-edit-form" aria-label="Edit the collection" onSubmit={save}
      onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); onDone() } }}>
      <label>Name <input ref={first} data-testid="collection-edit-name" value={name} onInput={(e) => setName(e.currentTarget.value)}
        aria-invalid={at('name').length ? 'true' : undefined} aria-describedby="collection-edit-name-err" /></label>
      <span id="collection-edit-name-err">{shown('name')}</span>
      <label>Description <textarea data-testid="collection-edit-description" rows={3} value={description} onInput={(e) => setDescription(e.currentTarget.value)}
        aria-invalid={at('description').length ? 'true' : undefined} aria-describedby="collection-edit-description-err" /></label>
      <span id="collection-edit-description-err">{shown('description')}</span>
      <p class="hint">Knowledge bases built from this collection keep it by id: a new name changes only its label.</p>
      <div>
        <button type="submit" data-testid="collection-edit-save" disabled={busy}>Save</button>{' '}
        <button type="button" data-testid="collection-edit-cancel" onClick={() => onDone()}>Cancel</button>
        {busy && <Spinner label="Saving" />}
      </div>
      <ErrorBox error={error} />
    </form>
  )
}
