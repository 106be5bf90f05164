package linearizability

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
)

// A porcupine timeline is one page: its stylesheet, its script and the
// whole history as JSON inline, so it opens offline from disk. The script
// and the data are most of its weight (a megabyte for a busy history) and
// compress about twelvefold, so a compact timeline carries them gzipped
// and base64-encoded, and a few lines of JavaScript unpack them with the
// browser's own DecompressionStream when the page opens: still one file
// that opens from disk, with nothing fetched.
const (
	scriptOpen  = "<script>"
	scriptClose = "</script>"
	// compactMark names the loader, so compacting twice changes nothing.
	compactMark = "locklab-compact-timeline"
)

// compactLoader runs the unpacked script as the page's own inline script
// ran it: a script element added at the end of the body, once the
// elements it draws into (#canvas, #calc) exist.
const compactLoader = `<script id="` + compactMark + `">
(async () => {
  const packed = Uint8Array.from(atob("%s"), (c) => c.charCodeAt(0));
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  const script = document.createElement("script");
  script.textContent = await new Response(stream).text();
  document.body.appendChild(script);
})();
</script>`

// CompactTimeline returns a porcupine timeline page with its script and
// data gzipped inline. A page already compact comes back unchanged, and
// changed is false.
func CompactTimeline(page []byte) (compact []byte, changed bool, err error) {
	if IsCompactTimeline(page) {
		return page, false, nil
	}
	open, body, end, err := inlineScript(page)
	if err != nil {
		return nil, false, fmt.Errorf("compact timeline: %w", err)
	}
	var packed bytes.Buffer
	zw, err := gzip.NewWriterLevel(&packed, gzip.BestCompression)
	if err != nil {
		return nil, false, fmt.Errorf("compact timeline: %w", err)
	}
	if _, err := zw.Write(body[:end]); err != nil {
		return nil, false, fmt.Errorf("compact timeline: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, false, fmt.Errorf("compact timeline: %w", err)
	}
	var out bytes.Buffer
	out.Write(page[:open])
	fmt.Fprintf(&out, compactLoader, base64.StdEncoding.EncodeToString(packed.Bytes()))
	out.Write(body[end+len(scriptClose):])
	return out.Bytes(), true, nil
}

// timelineTitle is the title porcupine gives every timeline page.
const timelineTitle = "<title>Porcupine</title>"

// IsTimeline reports whether an HTML page is a porcupine timeline, compact
// or not (and not, say, a page of the report site).
func IsTimeline(page []byte) bool { return bytes.Contains(page, []byte(timelineTitle)) }

// IsCompactTimeline reports whether a timeline is already compact.
func IsCompactTimeline(page []byte) bool { return bytes.Contains(page, []byte(compactMark)) }

// packedScript finds the base64 a compact timeline's loader unpacks.
var packedScript = regexp.MustCompile(`atob\("([A-Za-z0-9+/=]*)"\)`)

// TimelineScript is what a browser runs when a timeline opens: the script
// and the history data, unpacked from a compact timeline or read as they
// stand from a plain one. A test that asks what a timeline shows (the
// sections' descriptions) reads this, not the page's bytes.
func TimelineScript(page []byte) (string, error) {
	if !IsCompactTimeline(page) {
		_, body, end, err := inlineScript(page)
		if err != nil {
			return "", fmt.Errorf("timeline script: %w", err)
		}
		return string(body[:end]), nil
	}
	m := packedScript.FindSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("timeline script: a compact timeline with no packed script")
	}
	b, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		return "", fmt.Errorf("timeline script: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("timeline script: %w", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return "", fmt.Errorf("timeline script: %w", err)
	}
	return string(out), nil
}

// inlineScript finds a plain timeline's last inline script, which holds
// porcupine's code and the history: open is where its tag starts, body
// the page from just after the tag, and end the script's length in body.
func inlineScript(page []byte) (open int, body []byte, end int, err error) {
	open = bytes.LastIndex(page, []byte(scriptOpen))
	if open < 0 {
		return 0, nil, 0, fmt.Errorf("no %s in the page", scriptOpen)
	}
	body = page[open+len(scriptOpen):]
	end = bytes.Index(body, []byte(scriptClose))
	if end < 0 {
		return 0, nil, 0, fmt.Errorf("no %s after the script", scriptClose)
	}
	return open, body, end, nil
}
