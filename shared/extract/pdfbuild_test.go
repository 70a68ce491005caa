package extract

import (
	"bytes"
	"crypto/md5"
	"crypto/rc4"
	"fmt"
	"strings"
)

// pdfBuilder writes small PDFs by hand, computing the cross-reference offsets, so tests can make
// exactly the file they need: text drawn with Tj and TJ, an image-only page, a form XObject, a
// composite font, an encrypted file.
type pdfBuilder struct {
	header  string
	objs    []pdfObject
	trailer string // extra trailer entries
	fonts   string // extra entries of the pages' font dictionary, e.g. "/F2 3 0 R"
	key     []byte // RC4 file key: streams are encrypted with it when set
}

type pdfObject struct {
	dict     string
	stream   *string
	packedIn int // the object stream holding it, 0 when written on its own
	packedAt int // its index there
}

// add appends an object and returns its number.
func (b *pdfBuilder) add(dict string) int {
	b.objs = append(b.objs, pdfObject{dict: dict})
	return len(b.objs)
}

// addStream appends a stream object; dict is the stream dictionary without /Length.
func (b *pdfBuilder) addStream(dict, data string) int {
	b.objs = append(b.objs, pdfObject{dict: dict, stream: &data})
	return len(b.objs)
}

// set replaces the body of an object added earlier as a placeholder.
func (b *pdfBuilder) set(n int, dict string) { b.objs[n-1].dict = dict }

func (b *pdfBuilder) bytes(root int) []byte {
	var buf bytes.Buffer
	offsets := b.writeObjects(&buf)
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(b.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root %d 0 R %s >>\nstartxref\n%d\n%%%%EOF\n", len(b.objs)+1, root, b.trailer, xref)
	return buf.Bytes()
}

// writeObjects writes the header and every object not packed in an object stream, and returns
// each object's offset (0 for packed ones).
func (b *pdfBuilder) writeObjects(buf *bytes.Buffer) []int {
	header := b.header
	if header == "" {
		header = "%PDF-1.4"
	}
	buf.WriteString(header + "\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(b.objs))
	for i, o := range b.objs {
		if o.packedIn != 0 {
			continue
		}
		offsets[i] = buf.Len()
		fmt.Fprintf(buf, "%d 0 obj\n", i+1)
		if o.stream == nil {
			buf.WriteString(o.dict)
		} else {
			data := *o.stream
			if b.key != nil {
				data = string(rc4Crypt(objectKey(b.key, i+1), []byte(data)))
			}
			fmt.Fprintf(buf, "<< %s /Length %d >>\nstream\n%s\nendstream", strings.TrimSuffix(strings.TrimPrefix(o.dict, "<<"), ">>"), len(data), data)
		}
		buf.WriteString("\nendobj\n")
	}
	return offsets
}

// pack marks object n as stored at index i of object stream stm; the stream itself is the
// caller's to build.
func (b *pdfBuilder) pack(n, stm, i int) { b.objs[n-1].packedIn, b.objs[n-1].packedAt = stm, i }

// bytesXRefStream writes the file with a cross-reference stream (PDF 1.5), as writers that use
// object streams do; extra goes into the stream's dictionary after the entries written here.
func (b *pdfBuilder) bytesXRefStream(root int, extra string) []byte {
	var buf bytes.Buffer
	offsets := b.writeObjects(&buf)
	xref, self := buf.Len(), len(b.objs)+1
	var rows bytes.Buffer
	rows.Write([]byte{0, 0, 0, 0, 0, 0xff, 0xff})
	for i, o := range b.objs {
		if o.packedIn != 0 {
			rows.Write([]byte{2, 0, 0, byte(o.packedIn >> 8), byte(o.packedIn), byte(o.packedAt >> 8), byte(o.packedAt)})
		} else {
			rows.Write([]byte{1, byte(offsets[i] >> 24), byte(offsets[i] >> 16), byte(offsets[i] >> 8), byte(offsets[i]), 0, 0})
		}
	}
	rows.Write([]byte{1, byte(xref >> 24), byte(xref >> 16), byte(xref >> 8), byte(xref), 0, 0})
	fmt.Fprintf(&buf, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root %d 0 R %s /Length %d %s >>\nstream\n",
		self, self+1, root, b.trailer, rows.Len(), extra)
	buf.Write(rows.Bytes())
	fmt.Fprintf(&buf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return buf.Bytes()
}

// helvetica is a simple font dictionary without a Widths array (a standard-14 font).
const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

// buildPDF makes a PDF with one page per content stream, all drawing with font F1 = Helvetica and
// any extra resources given (e.g. "/XObject << /Im1 9 0 R >>").
func buildPDF(b *pdfBuilder, extraResources string, contents ...string) []byte {
	catalog := b.add("")
	pages := b.add("")
	font := b.add(helvetica)
	var kids []string
	for _, c := range contents {
		content := b.addStream("<< >>", c)
		page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R %s >> %s >> >>",
			pages, content, font, b.fonts, extraResources))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	return b.bytes(catalog)
}

// The standard security handler, revision 3 with a 128-bit RC4 key (PDF 32000-1:2008, 7.6.3),
// written from the specification for the encrypted fixtures.
var passwordPadding = []byte("\x28\xBF\x4E\x5E\x4E\x75\x8A\x41\x64\x00\x4E\x56\xFF\xFA\x01\x08" +
	"\x2E\x2E\x00\xB6\xD0\x68\x3E\x80\x2F\x0C\xA9\xFE\x64\x53\x69\x7A")

func padPassword(pw string) []byte {
	return append([]byte(pw), passwordPadding...)[:32]
}

func rc4Crypt(key, data []byte) []byte {
	c, err := rc4.NewCipher(key)
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// rc4Rounds applies RC4 with key, then 19 more times with the key XOR 1…19 (algorithms 3 and 5).
func rc4Rounds(key, data []byte) []byte {
	data = rc4Crypt(key, data)
	for i := 1; i <= 19; i++ {
		k := make([]byte, len(key))
		for j := range key {
			k[j] = key[j] ^ byte(i)
		}
		data = rc4Crypt(k, data)
	}
	return data
}

func md5Rounds(h []byte) []byte {
	for i := 0; i < 50; i++ {
		s := md5.Sum(h[:16])
		h = s[:]
	}
	return h[:16]
}

// encrypt sets up RC4-128 encryption with the given passwords and returns the /Encrypt object's
// trailer entries.
func (b *pdfBuilder) encrypt(user, owner string) {
	p := int32(-3904) // permissions: print, copy … all bits the spec requires set
	id := []byte("0123456789abcdef")
	ownerHash := md5.Sum(padPassword(owner))
	o := rc4Rounds(md5Rounds(ownerHash[:]), padPassword(user))

	h := md5.New()
	h.Write(padPassword(user))
	h.Write(o)
	pu := uint32(p)
	h.Write([]byte{byte(pu), byte(pu >> 8), byte(pu >> 16), byte(pu >> 24)})
	h.Write(id)
	key := md5Rounds(h.Sum(nil))

	x := md5.Sum(append(append([]byte{}, passwordPadding...), id...))
	u := append(rc4Rounds(key, x[:]), make([]byte, 16)...)

	enc := b.add(fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /P %d /O <%x> /U <%x> >>", p, o, u))
	b.trailer = fmt.Sprintf("/Encrypt %d 0 R /ID [<%x> <%x>]", enc, id, id)
	b.key = key
}

// objectKey is the RC4 key of one object (algorithm 1).
func objectKey(key []byte, num int) []byte {
	h := md5.New()
	h.Write(key)
	h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), 0, 0})
	return h.Sum(nil)[:16]
}
