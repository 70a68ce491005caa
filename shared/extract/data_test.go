package extract

import (
	"context"
	"strings"
	"testing"
)

func TestCSVAndJSON(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             string
		media            string
		fileType         FileType
	}{
		{
			name: "csv with header", file: "products.csv",
			data:  "name,price,notes\r\nWidget,3.50,\"blue, small\"\r\nGadget,,\"multi\nline\"\r\n",
			want:  "name: Widget; price: 3.50; notes: blue, small\nname: Gadget; notes: multi line",
			media: MediaCSV, fileType: FileData,
		},
		{
			name: "csv without header", file: "numbers.csv",
			data:  "1,2,3\n4,5,6\n",
			want:  "1; 2; 3\n4; 5; 6",
			media: MediaCSV, fileType: FileData,
		},
		{
			name: "semicolon csv with extra cells", file: "de.csv",
			data:  "Stadt;Einwohner\nBerlin;3700000;Hauptstadt\n",
			want:  "Stadt: Berlin; Einwohner: 3700000; column 3: Hauptstadt",
			media: MediaCSV, fileType: FileData,
		},
		{
			name: "tsv", file: "t.tsv",
			data:  "city\tcountry\nLyon\tFrance\n",
			want:  "city: Lyon; country: France",
			media: MediaTSV, fileType: FileData,
		},
		{
			name: "csv header only", file: "empty.csv",
			data:  "id,title\n",
			want:  "id; title",
			media: MediaCSV, fileType: FileData,
		},
		{
			name: "json object", file: "item.json",
			data:  `{"name":"Widget","size":{"w":20,"h":1.5e2},"tags":["blue","small"],"note":"two\n\nlines","extra":null,"empty":{},"none":[],"ok":true}`,
			want:  "name: Widget\nsize.w: 20\nsize.h: 1.5e2\ntags[0]: blue\ntags[1]: small\nnote: two lines\nextra: null\nempty: {}\nnone: []\nok: true",
			media: MediaJSON, fileType: FileData,
		},
		{
			name: "json records", file: "items.json",
			data:  `[{"id":1,"name":"A"},{"id":2,"name":"B"},"loose"]`,
			want:  "id: 1\nname: A\n\nid: 2\nname: B\n\nloose",
			media: MediaJSON, fileType: FileData,
		},
		{
			name: "ndjson", file: "log.jsonl",
			data:  "{\"level\":\"info\",\"msg\":\"started\"}\n\n{\"level\":\"warn\",\"msg\":\"slow\"}\n",
			want:  "level: info\nmsg: started\n\nlevel: warn\nmsg: slow",
			media: MediaNDJSON, fileType: FileData,
		},
		{
			name: "json judged by parsing: a .txt holding JSON stays text", file: "notes.txt",
			data:  `{"a": 1}`,
			want:  `{"a": 1}`,
			media: MediaText, fileType: FileDocument,
		},
		{
			name: "json judged by parsing: broken JSON is read as text", file: "broken.json",
			data:  `{"a": 1, "b": [1, 2}`,
			want:  `{"a": 1, "b": [1, 2}`,
			media: MediaText, fileType: FileDocument,
		},
		{
			name: "json judged by parsing: valid head, broken tail", file: "cut.json",
			data:  `{"a": "` + strings.Repeat("x", 5000) + `", "b": tru`,
			want:  `{"a": "` + strings.Repeat("x", 5000) + `", "b": tru`,
			media: MediaText, fileType: FileDocument,
		},
		{
			name: "json without extension", file: "upload",
			data:  `{"k": "v"}`,
			want:  "k: v",
			media: MediaJSON, fileType: FileData,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Text(context.Background(), tt.file, []byte(tt.data), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want {
				t.Errorf("text =\n%q\nwant\n%q", res.Text, tt.want)
			}
			if res.MediaType != tt.media || res.FileType != tt.fileType {
				t.Errorf("media, file type = %s, %s; want %s, %s", res.MediaType, res.FileType, tt.media, tt.fileType)
			}
		})
	}
}

func TestJSONHeadDecidesDetect(t *testing.T) {
	// The case above only reaches the JSON extractor because Detect, seeing the first 4 KiB, calls
	// it JSON; the extractor's full parse is what turns it into text.
	data := `{"a": "` + strings.Repeat("x", 5000) + `", "b": tru`
	if got := Detect("cut.json", []byte(data)).MediaType; got != MediaJSON {
		t.Errorf("Detect = %s, want %s", got, MediaJSON)
	}
}

func TestJSONTooDeep(t *testing.T) {
	deep := make([]byte, 0, 2000)
	for i := 0; i < 1000; i++ {
		deep = append(deep, `{"a":`...)
	}
	deep = append(deep, '1')
	for i := 0; i < 1000; i++ {
		deep = append(deep, '}')
	}
	_, err := Text(context.Background(), "deep.json", deep, Limits{})
	assertInvalid(t, err, "the JSON file is nested more than 256 levels deep")
}
