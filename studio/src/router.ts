// Paths under /studio/ name the screens; the server answers every one of them with index.html.
import { useEffect, useState } from 'preact/hooks'

export const ROOT = '/studio/'

export function navigate(to: string) {
  if (location.pathname + location.search !== to) history.pushState(null, '', to)
  dispatchEvent(new PopStateEvent('popstate'))
}

/** The current route: the path below /studio/ split into segments, and the query. */
export function useRoute(): { parts: string[]; query: URLSearchParams } {
  const [path, setPath] = useState(location.pathname + location.search)
  useEffect(() => {
    const on = () => setPath(location.pathname + location.search)
    addEventListener('popstate', on)
    return () => removeEventListener('popstate', on)
  }, [])
  const u = new URL(path, location.origin)
  const rest = u.pathname.startsWith(ROOT) ? u.pathname.slice(ROOT.length) : ''
  return { parts: rest.split('/').filter(Boolean).map(decodeURIComponent), query: u.searchParams }
}

/** A click on an in-studio link changes the screen without reloading the page. */
export function link(e: MouseEvent) {
  const a = (e.target as Element).closest('a')
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return
  const href = a.getAttribute('href') ?? ''
  if (!href.startsWith(ROOT)) return
  e.preventDefault()
  navigate(href)
}
