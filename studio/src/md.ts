// Answers are markdown written by a model: rendered with marked, then sanitized with DOMPurify
// (no scripts, handlers, styles, forms or frames), links opened in a new tab without a referrer.
// Raw HTML in the markdown is not markup here but text: a model that writes
// `<img src=x onerror=…>` is shown saying it. (Sanitizing it would also work, but DOMPurify's
// inert parse of an attribute handler is itself reported as a CSP violation by Chromium, which
// would hide a real one.)
import DOMPurify from 'dompurify'
import { Marked } from 'marked'

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer nofollow')
  }
})

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ESC[c])

const md = new Marked({
  async: false,
  gfm: true,
  breaks: true,
  renderer: { html: ({ text }) => escape(text) },
})

/** Markdown as sanitized HTML, safe for innerHTML. */
export function markdown(text: string): string {
  const html = md.parse(text) as string
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
    ALLOW_DATA_ATTR: false,
  })
}
