package api_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

// The knowledge tests run the files, collections and knowledge-bases groups through the full
// application on the stand-ins: DynamoDB Local, the S3 and SQS stand-ins, the OpenSearch
// stand-in and the local embedder; ingestion runs in the ingest function behind the SQS event
// source stand-in, as on AWS.

// returnsPolicy is the file a question about returns must find, among unrelated ones.
const returnsPolicy = `Returns and refunds

Purchases may be sent back within thirty days of delivery for a full refund. Items must be unused
and in their original packaging. Refunds are paid to the original payment method within five
business days of the return arriving at our warehouse.
`

const shippingNotes = `# Shipping

Parcels leave the warehouse every weekday at noon. International shipping takes between one and
three weeks depending on customs.

## Packaging

We pack fragile goods in recycled cardboard and paper padding.
`

// scannedPDF is a one-page PDF whose page is only an image: no text layer, as a scan.
func scannedPDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
		"<< /Length 31 >>\nstream\nq 612 0 0 792 0 0 cm /Im1 Do Q\nendstream",
		"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\xff\nendstream",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// formPart is one part of a multipart upload.
type formPart struct {
	name, filename, contentType string
	data                        []byte
}

// form builds a multipart/form-data body and its Content-Type.
func form(t testing.TB, parts ...formPart) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.filename != "" {
			disp += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), b.Bytes()
}

// upload sends POST /api/v1/files/ with the given parts.
func (s *stack) upload(key string, parts ...formPart) response {
	s.t.Helper()
	ct, body := form(s.t, parts...)
	return s.do(req{method: "POST", path: "/api/v1/files/", key: key, body: body, header: map[string]string{"Content-Type": ct}})
}

// uploadFile uploads one file and returns its record, failing unless it is stored.
func (s *stack) uploadFile(key, name, contentType string, data []byte, fields ...formPart) map[string]any {
	s.t.Helper()
	res := s.upload(key, append([]formPart{{name: "file", filename: name, contentType: contentType, data: data}}, fields...)...)
	if res.status != http.StatusCreated {
		s.t.Fatalf("upload %s: %d %s", name, res.status, res.body)
	}
	return res.json(s.t)
}

// created sends a JSON request that must answer 201 and returns its body.
func (s *stack) created(key, path string, body any) map[string]any {
	s.t.Helper()
	res := s.do(req{method: "POST", path: path, key: key, body: body})
	if res.status != http.StatusCreated {
		s.t.Fatalf("POST %s: %d %s", path, res.status, res.body)
	}
	return res.json(s.t)
}

// ok sends a request that must answer 200 and returns its body.
func (s *stack) ok(method, path, key string, body any) response {
	s.t.Helper()
	res := s.do(req{method: method, path: path, key: key, body: body})
	if res.status != http.StatusOK {
		s.t.Fatalf("%s %s: %d %s", method, path, res.status, res.body)
	}
	return res
}

// waitKB polls check_status until the knowledge base's run ends and returns the last answer.
func (s *stack) waitKB(key, id string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st := s.ok("GET", "/api/v1/knowledge-bases/"+id+"/check_status/", key, nil).json(s.t)
		kb, _ := st["knowledge_base"].(map[string]any)
		switch kb["status"] {
		case "completed", "failed":
			return st
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("knowledge base %s still %v after 2 minutes: %v", id, kb["status"], st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// search runs a search and returns the hits.
func (s *stack) search(key, kbID string, body any) []map[string]any {
	s.t.Helper()
	res := s.ok("POST", "/api/v1/knowledge-bases/"+kbID+"/search/", key, body).json(s.t)
	raw, _ := res["results"].([]any)
	hits := make([]map[string]any, len(raw))
	for i, h := range raw {
		hits[i], _ = h.(map[string]any)
	}
	return hits
}

func ids(list []any, field string) []string {
	var out []string
	for _, v := range list {
		m, _ := v.(map[string]any)
		s, _ := m[field].(string)
		out = append(out, s)
	}
	return out
}

// TestKnowledgeEndToEnd: three files uploaded (text, Markdown, a PDF without text), a
// collection of them, a knowledge base on the local embedder, ingested by the ingest function
// through the SQS stand-in; per-file outcomes, a search by meaning, and a deleted file that is
// never found again.
func TestKnowledgeEndToEnd(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")

	txt := s.uploadFile(key, "returns.txt", "text/plain", []byte(returnsPolicy), formPart{name: "tags", data: []byte("policy, customers")})
	md := s.uploadFile(key, "shipping.md", "text/markdown", []byte(shippingNotes))
	pdf := s.uploadFile(key, "scan.pdf", "application/pdf", scannedPDF())
	if txt["id"] != txt["file_id"] || txt["status"] != "active" || txt["original_filename"] != "returns.txt" || txt["size_bytes"] != float64(len(returnsPolicy)) {
		t.Errorf("text file record = %v", txt)
	}
	if tags, _ := txt["tags"].([]any); len(tags) != 2 || tags[0] != "policy" || tags[1] != "customers" {
		t.Errorf("tags = %v, want [policy customers]", txt["tags"])
	}
	if pdf["media_type"] != "application/pdf" || pdf["file_type"] != "document" {
		t.Errorf("pdf record = %v", pdf)
	}
	fileIDs := []any{txt["id"], md["id"], pdf["id"]}

	coll := s.created(key, "/api/v1/collections/", map[string]any{"name": "Support", "description": "customer support"})
	if coll["status"] != "pending" || coll["progress"] != float64(0) || coll["data_source_count"] != float64(0) || coll["total_size"] != float64(0) {
		t.Errorf("new collection = %v", coll)
	}
	collPath := "/api/v1/collections/" + coll["id"].(string) + "/"
	added := s.ok("POST", collPath+"files/", key, map[string]any{"file_ids": fileIDs}).json(t)
	if added["success"] != true || added["added"] != float64(3) || added["failed"] != float64(0) {
		t.Errorf("add files = %v", added)
	}
	detail := s.ok("GET", collPath, key, nil).json(t)
	if detail["data_source_count"] != float64(3) || len(detail["datasources"].([]any)) != 3 {
		t.Errorf("collection detail = %v", detail)
	}
	if want := float64(len(returnsPolicy) + len(shippingNotes) + len(scannedPDF())); detail["total_size"] != want {
		t.Errorf("total_size = %v, want %v", detail["total_size"], want)
	}

	kb := s.created(key, "/api/v1/knowledge-bases/", map[string]any{
		"name": "Support KB", "description": "answers for customers", "processing_engine": "opensearch",
		"selected_collections": []any{coll["id"]}, "embedding_config": map[string]any{"provider": "local"},
	})
	if kb["status"] != "pending" {
		t.Errorf("new knowledge base status = %v, want pending", kb["status"])
	}
	kbID := kb["id"].(string)
	st := s.waitKB(key, kbID)
	status := st["knowledge_base"].(map[string]any)
	if status["status"] != "completed" || status["progress"] != float64(100) || status["success_rate"] != float64(66) {
		t.Errorf("final status = %v", status)
	}

	got := s.ok("GET", "/api/v1/knowledge-bases/"+kbID+"/", key, nil).json(t)
	snaps, _ := got["datasource_snapshots"].(map[string]any)
	for id, want := range map[string]string{txt["id"].(string): "ingested", md["id"].(string): "ingested", pdf["id"].(string): "failed"} {
		snap, _ := snaps[id].(map[string]any)
		if snap["ingestion_status"] != want {
			t.Errorf("snapshot of %s = %v, want ingestion_status %s", id, snap, want)
		}
	}
	errs, _ := got["datasource_errors"].(map[string]any)
	if msg, _ := errs[pdf["id"].(string)].(string); !strings.Contains(msg, "no text could be extracted") {
		t.Errorf("datasource_errors = %v, want the PDF's reason", errs)
	}
	if len(errs) != 1 {
		t.Errorf("datasource_errors = %v, want only the PDF", errs)
	}
	if ing := ids(got["ingested_datasources"].([]any), "id"); len(ing) != 2 {
		t.Errorf("ingested_datasources = %v", got["ingested_datasources"])
	}
	if failed := ids(got["failed_datasources"].([]any), "id"); len(failed) != 1 || failed[0] != pdf["id"] {
		t.Errorf("failed_datasources = %v", got["failed_datasources"])
	}

	// By meaning: the question shares no content word with the answer.
	hits := s.search(key, kbID, map[string]any{"query": "how long do I have to return an item", "top_k": 3})
	if len(hits) == 0 || hits[0]["file_id"] != txt["id"] || hits[0]["file_name"] != "returns.txt" || !strings.Contains(hits[0]["text"].(string), "thirty days") {
		t.Fatalf("search hits = %v, want returns.txt first", hits)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i]["score"].(float64) > hits[i-1]["score"].(float64) {
			t.Errorf("hits not best first: %v", hits)
		}
	}

	// A deleted file is never found again, and is gone from the file list.
	if res := s.do(req{method: "DELETE", path: "/api/v1/files/" + txt["id"].(string) + "/", key: key}); res.status != http.StatusNoContent {
		t.Fatalf("delete file: %d %s", res.status, res.body)
	}
	for _, h := range s.search(key, kbID, map[string]any{"query": "how long do I have to return an item", "top_k": 10}) {
		if h["file_id"] == txt["id"] {
			t.Errorf("deleted file found by search: %v", h)
		}
	}
	if res := s.do(req{method: "GET", path: "/api/v1/files/" + txt["id"].(string) + "/", key: key}); res.status != http.StatusNotFound {
		t.Errorf("deleted file: %d %s", res.status, res.body)
	}
	var listed []any
	if err := jsonUnmarshal(s.ok("GET", "/api/v1/files/", key, nil).body, &listed); err != nil {
		t.Fatal(err)
	}
	if l := ids(listed, "id"); len(l) != 2 {
		t.Errorf("files after the delete = %v", l)
	}
}
